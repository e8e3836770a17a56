-- the last 5 minutes before a time, max of 1 metric per minute, all hosts
SELECT date_trunc('minute', time) AS minute, max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu_jsonb
 WHERE time < :'end'
 GROUP BY minute
 ORDER BY minute DESC
 LIMIT 5;
