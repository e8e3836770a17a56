-- the last 5 minutes before a time, max of 1 metric per minute, all hosts
SELECT date_trunc('minute', time) AS minute, max(usage_user) AS max_usage_user
  FROM cpu_typed
 WHERE time < :'end'
 GROUP BY minute
 ORDER BY minute DESC
 LIMIT 5;
