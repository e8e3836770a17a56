-- readings with usage_user > 90, 1 host, 12 hours: conditions on the names of a subquery, as on a user's view
SELECT *
  FROM (SELECT time, tags->>'hostname' AS hostname, (doc->>'usage_user')::float8 AS usage_user,
               (doc->>'usage_system')::float8 AS usage_system, (doc->>'usage_idle')::float8 AS usage_idle
          FROM cpu) readings
 WHERE hostname = :'host' AND time >= :'start' AND time < :'end' AND usage_user > 90
 ORDER BY time;
