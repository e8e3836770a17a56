-- readings with usage_user > 90, all hosts, 12 hours: the time and the document
SELECT time, doc
  FROM cpu
 WHERE time >= :'start' AND time < :'end' AND (doc->>'usage_user')::float8 > 90
 ORDER BY time, tags->>'hostname';
