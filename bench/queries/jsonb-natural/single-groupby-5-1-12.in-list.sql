-- max of 5 metrics per minute, 5 hosts as an IN list, 12 hours
SELECT date_trunc('minute', time) AS minute,
       max((doc->>'usage_user')::float8) AS max_usage_user,
       max((doc->>'usage_system')::float8) AS max_usage_system,
       max((doc->>'usage_idle')::float8) AS max_usage_idle,
       max((doc->>'usage_nice')::float8) AS max_usage_nice,
       max((doc->>'usage_iowait')::float8) AS max_usage_iowait
  FROM cpu_jsonb
 WHERE tags->>'hostname' IN (:'host', 'host_1', 'host_2', 'host_3', 'host_4') AND time >= :'start' AND time < :'end'
 GROUP BY 1
 ORDER BY 1;
