-- mean of 1 metric per hour and host, all hosts, 12 hours
SELECT date_trunc('hour', time) AS hour, tags->>'hostname' AS hostname,
       avg((doc->>'usage_user')::float8) AS avg_usage_user
  FROM cpu
 WHERE time >= :'start' AND time < :'end'
 GROUP BY hour, hostname
 ORDER BY hour, hostname;
