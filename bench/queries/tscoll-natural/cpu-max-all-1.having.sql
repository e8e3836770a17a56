-- max of 10 metrics per hour, 1 host, 8 hours: date_trunc, grouped by alias, with a HAVING
SELECT date_trunc('hour', time) AS hour,
       max((doc->>'usage_user')::float8) AS max_usage_user,
       max((doc->>'usage_system')::float8) AS max_usage_system,
       max((doc->>'usage_idle')::float8) AS max_usage_idle,
       max((doc->>'usage_nice')::float8) AS max_usage_nice,
       max((doc->>'usage_iowait')::float8) AS max_usage_iowait,
       max((doc->>'usage_irq')::float8) AS max_usage_irq,
       max((doc->>'usage_softirq')::float8) AS max_usage_softirq,
       max((doc->>'usage_steal')::float8) AS max_usage_steal,
       max((doc->>'usage_guest')::float8) AS max_usage_guest,
       max((doc->>'usage_guest_nice')::float8) AS max_usage_guest_nice
  FROM cpu
 WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end'
 GROUP BY hour
HAVING count(*) > 0
 ORDER BY hour;
