-- readings with usage_user > 90, 1 host, 12 hours: whole rows
SELECT *
  FROM cpu
 WHERE tags->>'hostname' = :'host' AND time >= :'start' AND time < :'end' AND (doc->>'usage_user')::float8 > 90
 ORDER BY time;
