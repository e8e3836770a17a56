-- Without shared_preload_libraries, CREATE EXTENSION warns, and collections
-- still work.
SHOW shared_preload_libraries;
CREATE EXTENSION tscoll;
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor');
SELECT name, options FROM tscoll.list_collections();
-- The session keeps its own bucket catalog.
INSERT INTO weather ("timestamp", sensor, doc) VALUES ('2024-01-01 00:00:00+00', '1', '{}'),
                                                     ('2024-01-01 00:00:01+00', '1', '{}');
SELECT tscoll.catalog_stats() - 'memoryUsage';
SELECT tscoll.collection_stats('weather')->'numMeasurementsCommitted' AS committed;
-- UPDATE and DELETE are translated by hooks that a session has once tscoll
-- is loaded. A statement parsed before (here: the first of a session) goes
-- to the view's rules instead: meta updates and deletes of whole buckets
-- work, slower; anything else asks to be run again (SPEC §6).
INSERT INTO weather ("timestamp", sensor, doc)
SELECT '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 minute', jsonb_build_object('s', g % 3),
       jsonb_build_object('v', g)
  FROM generate_series(1, 3000) g;
SELECT sensor, count(*), sum((doc->>'v')::int) FROM weather GROUP BY 1 ORDER BY 1;
\c
UPDATE weather SET sensor = '{"s": 5}' WHERE sensor = '{"s": 1}';
\c
UPDATE weather SET sensor = sensor || '{"moved": true}' WHERE sensor @> '{"s": 5}';
\c
DELETE FROM weather WHERE sensor = '{"s": 2}';
SELECT sensor, count(*), sum((doc->>'v')::int) FROM weather GROUP BY 1 ORDER BY 1;
-- A condition that takes part of a bucket, an assignment of another
-- column, a meta value read from measurements, a subquery, RETURNING:
-- refused, and nothing changed.
\c
DELETE FROM weather WHERE (doc->>'v')::int > 2500;
\c
DELETE FROM weather WHERE "timestamp" < '2024-01-01 01:00:00+00';
\c
UPDATE weather SET doc = '{}' WHERE sensor = '1';
\c
UPDATE weather SET sensor = jsonb_build_object('v', doc->'v') WHERE sensor = '{"s": 0}';
\c
DELETE FROM weather WHERE sensor = '{"s": 0}' AND doc->>'_id' IN (SELECT doc->>'_id' FROM weather);
\c
DELETE FROM weather WHERE sensor = '{"s": 0}' RETURNING "timestamp";
SELECT sensor, count(*), sum((doc->>'v')::int) FROM weather GROUP BY 1 ORDER BY 1;
-- Run again, now translated.
DELETE FROM weather WHERE (doc->>'v')::int > 2500;
SELECT sensor, count(*), sum((doc->>'v')::int) FROM weather GROUP BY 1 ORDER BY 1;
-- Without a condition, every bucket is whole.
\c
DELETE FROM weather;
SELECT count(*) FROM weather;
SELECT tscoll.drop_collection('weather');
-- Typed fields: the view's own definition reads them; its rules, which
-- have a column per view column, still map meta updates and whole-bucket
-- deletes, and refuse the rest.
SELECT tscoll.create_collection('typed', 't', 'm', fields => '{"v": "float8"}');
SELECT tscoll.coll_mod('typed', '{"fields": {"s": "text"}}')->'fields';
INSERT INTO typed (t, m, doc) VALUES ('2024-01-01 00:00:00+00', '1', '{"v": 1.5, "s": "a"}'),
                                     ('2024-01-01 00:00:01+00', '2', '{"v": "x", "s": 2}');
INSERT INTO typed (t, m, v, s) VALUES ('2024-01-01 00:00:02+00', '2', 2.5, 'b');
SELECT m, v, s FROM typed ORDER BY t;
\c
UPDATE typed SET m = '3' WHERE m = '1';
\c
UPDATE typed SET v = 1 WHERE m = '2';
\c
DELETE FROM typed WHERE m = '2' RETURNING v;
\c
DELETE FROM typed WHERE m = '2';
SELECT m, v, s FROM typed ORDER BY t;
SELECT tscoll.drop_collection('typed');
