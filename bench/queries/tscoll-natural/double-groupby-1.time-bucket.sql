-- mean of 1 metric per hour and host, all hosts, 12 hours: TimescaleDB's time_bucket
SELECT tscoll.time_bucket('1 hour', time) AS hour, tags->>'hostname' AS hostname,
       avg((doc->>'usage_user')::float8) AS avg_usage_user
  FROM cpu
 WHERE time >= :'start' AND time < :'end'
 GROUP BY 1, 2
 ORDER BY 1, 2;
