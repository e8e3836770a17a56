-- readings with usage_user > 90, 1 host, 12 hours: whole rows
SELECT *
  FROM cpu_typed
 WHERE hostname = :'host' AND time >= :'start' AND time < :'end' AND usage_user > 90
 ORDER BY time;
