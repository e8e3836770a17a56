-- max of 1 metric per minute, 1 host, 1 hour: the readings named in a CTE, grouped by alias
WITH readings AS (
    SELECT time, usage_user
      FROM cpu_typed
     WHERE hostname = :'host' AND time >= :'start' AND time < :'end')
SELECT date_trunc('minute', time) AS minute, max(usage_user) AS max_usage_user
  FROM readings
 GROUP BY minute
 ORDER BY minute;
