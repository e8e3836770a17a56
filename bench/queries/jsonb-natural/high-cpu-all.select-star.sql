-- readings with usage_user > 90, all hosts, 12 hours: whole rows
SELECT *
  FROM cpu_jsonb
 WHERE time >= :'start' AND time < :'end' AND (doc->>'usage_user')::float8 > 90
 ORDER BY time, tags->>'hostname';
