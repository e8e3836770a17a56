-- the last reading of every host: whole rows
SELECT DISTINCT ON (tags->>'hostname') *
  FROM cpu
 ORDER BY tags->>'hostname', time DESC;
