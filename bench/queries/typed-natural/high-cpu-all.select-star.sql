-- readings with usage_user > 90, all hosts, 12 hours: whole rows
SELECT *
  FROM cpu_typed
 WHERE time >= :'start' AND time < :'end' AND usage_user > 90
 ORDER BY time, hostname;
