-- max of 1 metric per minute, 1 host, 1 hour, as Grafana's $__timeGroupAlias(time, 1m) writes it
SELECT floor(extract(epoch from time)/60)*60 AS "time", max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu
 WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end'
 GROUP BY 1
 ORDER BY 1;
