-- mean of 10 metrics per hour and host, all hosts, 12 hours: Grafana's $__timeGroup(time, 1h)
SELECT floor(extract(epoch from time)/3600)*3600 AS "time", tags->>'hostname' AS hostname,
       avg((doc->>'usage_user')::float8) AS avg_usage_user,
       avg((doc->>'usage_system')::float8) AS avg_usage_system,
       avg((doc->>'usage_idle')::float8) AS avg_usage_idle,
       avg((doc->>'usage_nice')::float8) AS avg_usage_nice,
       avg((doc->>'usage_iowait')::float8) AS avg_usage_iowait,
       avg((doc->>'usage_irq')::float8) AS avg_usage_irq,
       avg((doc->>'usage_softirq')::float8) AS avg_usage_softirq,
       avg((doc->>'usage_steal')::float8) AS avg_usage_steal,
       avg((doc->>'usage_guest')::float8) AS avg_usage_guest,
       avg((doc->>'usage_guest_nice')::float8) AS avg_usage_guest_nice
  FROM cpu
 WHERE time >= :'start' AND time < :'end'
 GROUP BY 1, 2
 ORDER BY 1, 2;
