-- readings with usage_user > 90, 1 host, 12 hours
SELECT time, tags->>'hostname' AS hostname,
       (doc->>'usage_user')::float8 AS usage_user,
       (doc->>'usage_system')::float8 AS usage_system,
       (doc->>'usage_idle')::float8 AS usage_idle,
       (doc->>'usage_nice')::float8 AS usage_nice,
       (doc->>'usage_iowait')::float8 AS usage_iowait,
       (doc->>'usage_irq')::float8 AS usage_irq,
       (doc->>'usage_softirq')::float8 AS usage_softirq,
       (doc->>'usage_steal')::float8 AS usage_steal,
       (doc->>'usage_guest')::float8 AS usage_guest,
       (doc->>'usage_guest_nice')::float8 AS usage_guest_nice
  FROM cpu_jsonb
 WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end' AND (doc->>'usage_user')::float8 > 90.0
 ORDER BY time, hostname;
