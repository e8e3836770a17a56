-- max of 1 metric per minute, 1 host, 12 hours: every minute of the window, gaps filled by a generate_series join
SELECT m.minute, a.max_usage_user
  FROM generate_series(:'start'::timestamptz, :'end'::timestamptz - interval '1 minute', interval '1 minute') AS m(minute)
  LEFT JOIN (SELECT date_trunc('minute', time) AS minute, max(usage_user) AS max_usage_user
               FROM cpu_typed
              WHERE hostname = :'host' AND time >= :'start' AND time < :'end'
              GROUP BY 1) a USING (minute)
 ORDER BY 1;
