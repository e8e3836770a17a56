-- the last reading of every host: one LATERAL ORDER BY time DESC LIMIT 1 per host of a table of hosts
SELECT h.hostname, l.*
  FROM bench_hosts h,
       LATERAL (SELECT time, usage_user AS usage_user, usage_system AS usage_system, usage_idle AS usage_idle
                  FROM cpu_typed c
                 WHERE c.hostname = h.hostname
                 ORDER BY time DESC
                 LIMIT 1) l
 ORDER BY 1;
