-- max of 1 metric per minute, 1 host, 12 hours: date_bin, the host as a containment
SELECT date_bin('1 minute', time, '2000-01-01') AS minute, max((doc->>'usage_user')::float8) AS max_usage_user
  FROM cpu
 WHERE tags @> jsonb_build_object('hostname', :'host')
   AND time >= :'start' AND time < :'end'
 GROUP BY 1
 ORDER BY 1;
