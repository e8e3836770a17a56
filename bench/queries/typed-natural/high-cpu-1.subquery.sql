-- readings with usage_user > 90, 1 host, 12 hours: conditions on the names of a subquery, as on a user's view
SELECT *
  FROM (SELECT time, hostname, usage_user,
               usage_system, usage_idle
          FROM cpu_typed) readings
 WHERE hostname = :'host' AND time >= :'start' AND time < :'end' AND usage_user > 90
 ORDER BY time;
