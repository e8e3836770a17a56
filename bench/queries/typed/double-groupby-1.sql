-- mean of 1 metric per hour and host, all hosts, 12 hours
SELECT date_trunc('hour', time) AS hour, hostname,
       avg(usage_user) AS avg_usage_user
  FROM cpu_typed
 WHERE time >= :'start' AND time < :'end'
 GROUP BY hour, hostname
 ORDER BY hour, hostname;
