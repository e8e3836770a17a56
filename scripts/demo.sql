-- The demo database of scripts/start.sh. Idempotent.
CREATE EXTENSION IF NOT EXISTS tscoll;
SELECT tscoll.create_collection('demo', 'timestamp', 'sensor', granularity => 'minutes');
-- A day of readings, one every 5 minutes, from three sensors (loaded once).
INSERT INTO demo ("timestamp", sensor, doc)
SELECT timestamptz '2021-05-18 00:00:00+00' + i * interval '5 minutes',
       jsonb_build_object('sensorId', s, 'type', 'temperature'),
       jsonb_build_object('temp', round((12 + s + 6 * sin(i / 40.0))::numeric, 1))
  FROM generate_series(0, 287) i, generate_series(1, 3) s
 WHERE NOT EXISTS (SELECT FROM demo);
\echo
\echo 'Collections:'
SELECT name, bucket_table, options FROM tscoll.list_collections();
\echo 'Hourly average temperature per sensor, first hours:'
SELECT sensor->>'sensorId' AS sensor, date_trunc('hour', "timestamp") AS hour,
       round(avg((doc->>'temp')::numeric), 2) AS avg_temp, count(*)
  FROM demo GROUP BY 1, 2 ORDER BY 2, 1 LIMIT 6;
\echo 'Buckets:'
SELECT meta, control->'count' AS count, control->'min'->'timestamp' AS min_time
  FROM tscoll.buckets('demo') ORDER BY 3, 1;
