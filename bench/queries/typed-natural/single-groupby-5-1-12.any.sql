-- max of 5 metrics per minute, hosts as = ANY(array), 12 hours, grouped by position
SELECT date_trunc('minute', time) AS minute,
       max(usage_user) AS max_usage_user,
       max(usage_system) AS max_usage_system,
       max(usage_idle) AS max_usage_idle,
       max(usage_nice) AS max_usage_nice,
       max(usage_iowait) AS max_usage_iowait
  FROM cpu_typed
 WHERE hostname = ANY (ARRAY[:'host']) AND time >= :'start' AND time < :'end'
 GROUP BY 1
 ORDER BY 1;
