-- mean of 1 metric per hour and host, all hosts, 12 hours: hosts named by a join to the table of hosts
SELECT date_trunc('hour', c.time) AS hour, h.hostname, avg((c.doc->>'usage_user')::float8) AS avg_usage_user
  FROM cpu_jsonb c
  JOIN bench_hosts h ON c.tags->>'hostname' = h.hostname
 WHERE c.time >= :'start' AND c.time < :'end'
 GROUP BY 1, 2
 ORDER BY 1, 2;
