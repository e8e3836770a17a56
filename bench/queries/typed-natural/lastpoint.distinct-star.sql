-- the last reading of every host: whole rows
SELECT DISTINCT ON (hostname) *
  FROM cpu_typed
 ORDER BY hostname, time DESC;
