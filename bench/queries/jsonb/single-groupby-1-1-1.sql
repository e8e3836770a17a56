-- max of 1 metric per minute, 1 host, 1 hour
SELECT date_trunc('minute', time) AS minute,
       max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu_jsonb
 WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end'
 GROUP BY minute
 ORDER BY minute;
