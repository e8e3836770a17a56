-- the last reading of every host: max(time) per host, joined back to the readings
SELECT c.time, c.tags->>'hostname' AS hostname, (c.doc->>'usage_user')::float8 AS usage_user
  FROM cpu c
  JOIN (SELECT tags->>'hostname' AS hostname, max(time) AS time FROM cpu GROUP BY 1) latest
    ON c.tags->>'hostname' = latest.hostname AND c.time = latest.time
 ORDER BY 2;
