-- the last 5 minutes before a time, max of 1 metric per minute, all hosts: date_bin
SELECT date_bin('1 minute', time, '2000-01-01') AS minute, max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu
 WHERE time < :'end'
 GROUP BY 1
 ORDER BY 1 DESC
 LIMIT 5;
