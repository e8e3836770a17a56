-- the last reading of every host: one LATERAL ORDER BY time DESC LIMIT 1 per host of a table of hosts
SELECT h.hostname, l.*
  FROM bench_hosts h,
       LATERAL (SELECT time, (doc->>'usage_user')::float8 AS usage_user, (doc->>'usage_system')::float8 AS usage_system, (doc->>'usage_idle')::float8 AS usage_idle
                  FROM cpu_jsonb c
                 WHERE c.tags->>'hostname' = h.hostname
                 ORDER BY time DESC
                 LIMIT 1) l
 ORDER BY 1;
