-- mean of 10 metrics per hour and host, all hosts, 12 hours: date_bin over a subquery that names the fields, as a user's view would
SELECT date_bin('1 hour', time, '2000-01-01') AS hour, host AS hostname,
       avg(usage_user) AS avg_usage_user, avg(usage_system) AS avg_usage_system,
       avg(usage_idle) AS avg_usage_idle, avg(usage_nice) AS avg_usage_nice,
       avg(usage_iowait) AS avg_usage_iowait, avg(usage_irq) AS avg_usage_irq,
       avg(usage_softirq) AS avg_usage_softirq, avg(usage_steal) AS avg_usage_steal,
       avg(usage_guest) AS avg_usage_guest, avg(usage_guest_nice) AS avg_usage_guest_nice
  FROM (SELECT time, tags->>'hostname' AS host,
               (doc->>'usage_user')::float8 AS usage_user, (doc->>'usage_system')::float8 AS usage_system,
               (doc->>'usage_idle')::float8 AS usage_idle, (doc->>'usage_nice')::float8 AS usage_nice,
               (doc->>'usage_iowait')::float8 AS usage_iowait, (doc->>'usage_irq')::float8 AS usage_irq,
               (doc->>'usage_softirq')::float8 AS usage_softirq, (doc->>'usage_steal')::float8 AS usage_steal,
               (doc->>'usage_guest')::float8 AS usage_guest, (doc->>'usage_guest_nice')::float8 AS usage_guest_nice
          FROM cpu) readings
 WHERE time >= :'start' AND time < :'end'
 GROUP BY 1, 2
 ORDER BY 1, 2;
