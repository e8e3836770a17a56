-- the last reading of every host: max(time) per host, joined back to the readings
SELECT c.time, c.hostname, c.usage_user
  FROM cpu_typed c
  JOIN (SELECT hostname, max(time) AS time FROM cpu_typed GROUP BY 1) latest
    ON c.hostname = latest.hostname AND c.time = latest.time
 ORDER BY 2;
