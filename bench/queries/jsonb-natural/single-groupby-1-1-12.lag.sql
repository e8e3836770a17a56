-- max of 1 metric per minute, 1 host, 12 hours, and its change from the minute before: lag() over the grouped rows
SELECT minute, max_usage_user, max_usage_user - lag(max_usage_user) OVER (ORDER BY minute) AS change
  FROM (SELECT date_trunc('minute', time) AS minute, max((doc->>'usage_user')::float8) AS max_usage_user
          FROM cpu_jsonb
         WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end'
         GROUP BY 1) per_minute
 ORDER BY minute;
