-- mean of 1 metric per hour and host, all hosts, 12 hours: TimescaleDB's time_bucket
SELECT date_bin('1 hour', time, '2000-01-03') AS hour, tags->>'hostname' AS hostname,
       avg((doc->>'usage_user')::float8) AS avg_usage_user
  FROM cpu_jsonb
 WHERE time >= :'start' AND time < :'end'
 GROUP BY 1, 2
 ORDER BY 1, 2;
