-- the last 5 minutes before a time, max of 1 metric per minute, all hosts: Grafana's $__timeGroupAlias(time, 1m)
SELECT floor(extract(epoch from time)/60)*60 AS "time", max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu
 WHERE time < :'end'
 GROUP BY 1
 ORDER BY 1 DESC
 LIMIT 5;
