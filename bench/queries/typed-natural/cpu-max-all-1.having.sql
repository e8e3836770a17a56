-- max of 10 metrics per hour, 1 host, 8 hours: date_trunc, grouped by alias, with a HAVING
SELECT date_trunc('hour', time) AS hour,
       max(usage_user) AS max_usage_user,
       max(usage_system) AS max_usage_system,
       max(usage_idle) AS max_usage_idle,
       max(usage_nice) AS max_usage_nice,
       max(usage_iowait) AS max_usage_iowait,
       max(usage_irq) AS max_usage_irq,
       max(usage_softirq) AS max_usage_softirq,
       max(usage_steal) AS max_usage_steal,
       max(usage_guest) AS max_usage_guest,
       max(usage_guest_nice) AS max_usage_guest_nice
  FROM cpu_typed
 WHERE hostname = :'host' AND time >= :'start' AND time < :'end'
 GROUP BY hour
HAVING count(*) > 0
 ORDER BY hour;
