-- max of 5 metrics per minute, 5 hosts as an IN list, 12 hours
SELECT date_trunc('minute', time) AS minute,
       max(usage_user) AS max_usage_user,
       max(usage_system) AS max_usage_system,
       max(usage_idle) AS max_usage_idle,
       max(usage_nice) AS max_usage_nice,
       max(usage_iowait) AS max_usage_iowait
  FROM cpu_typed
 WHERE hostname IN (:'host', 'host_1', 'host_2', 'host_3', 'host_4') AND time >= :'start' AND time < :'end'
 GROUP BY 1
 ORDER BY 1;
