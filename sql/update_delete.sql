-- UPDATE and DELETE through the view (SPEC §6): MongoDB's delete matrix,
-- meta updates, the refusals, the counts, and what EXPLAIN shows.
\i test/setup.psql
-- Command tags carry the measurement counts: show them.
\set QUIET off
SET TimeZone = 'UTC';
SELECT tscoll.create_collection('w', 'time', 'tag');
-- Three series of ten measurements, one a minute, in buckets of at most 4.
SET tscoll.bucket_max_count = 4;
INSERT INTO w ("time", tag, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 minute', jsonb_build_object('s', i % 3),
       jsonb_build_object('_id', i, 'f', i % 5)
  FROM generate_series(0, 29) i;
RESET tscoll.bucket_max_count;
-- Every bucket: its series, count, control times, _id time and measurement _ids.
CREATE VIEW bucket_ids AS
SELECT meta AS tag, control->>'count' AS n, control->'min'->>'time' AS min_time,
       control->'max'->>'time' AS max_time, tscoll.objectid_time(_id) AS id_time,
       (SELECT string_agg(v, ',' ORDER BY k::int) FROM jsonb_each_text(data->'_id') AS e(k, v)) AS ids
  FROM tscoll.buckets('w') ORDER BY meta, min_time;
SELECT * FROM bucket_ids;

-- Deletes by _id, inside one bucket and across buckets and series.
BEGIN;
DELETE FROM w WHERE (doc->>'_id')::int IN (3, 6);
DELETE FROM w WHERE (doc->>'_id')::int BETWEEN 13 AND 20;
SELECT * FROM bucket_ids;
ROLLBACK;

-- Deletes by time: buckets inside the range go whole, without unpacking
-- (the unpacking subplans are never executed).
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) DELETE FROM w WHERE "time" < '2024-01-01 00:12';
SELECT * FROM bucket_ids;
ROLLBACK;
BEGIN;
DELETE FROM w WHERE "time" >= '2024-01-01 00:05' AND "time" <= '2024-01-01 00:20';
SELECT * FROM bucket_ids;
ROLLBACK;
BEGIN;
DELETE FROM w WHERE "time" = '2024-01-01 00:07';
DELETE FROM w WHERE '2024-01-01 00:28' < "time";
SELECT * FROM bucket_ids;
ROLLBACK;

-- A measurement field across the three series: some buckets match whole,
-- some in part, some not at all.
BEGIN;
DELETE FROM w WHERE (doc->>'_id')::int < 8 OR (doc->>'f')::int = 4;
SELECT * FROM bucket_ids;
SELECT count(*), min((doc->>'_id')::int) FROM w WHERE (doc->>'_id')::int < 8 OR (doc->>'f')::int = 4;
ROLLBACK;

-- Meta and measurement predicates together; a subquery over another table.
CREATE TABLE wanted (tag jsonb);
INSERT INTO wanted VALUES ('{"s": 1}');
BEGIN;
DELETE FROM w WHERE tag = '{"s": 1}' AND (doc->>'f')::int >= 2;
DELETE FROM w WHERE tag IN (SELECT jsonb_build_object('s', 2)) AND doc->'f' = '0';
DELETE FROM w WHERE tag IN (SELECT tag FROM wanted) AND "time" > '2024-01-01 00:20';
SELECT * FROM bucket_ids;
ROLLBACK;

-- Deleting a bucket's earliest measurement keeps control.min.time and _id.
BEGIN;
DELETE FROM w WHERE (doc->>'_id')::int IN (12, 24);
SELECT * FROM bucket_ids WHERE tag = '{"s": 0}';
ROLLBACK;

-- Meta-only deletes and updates are plain statements on the bucket table.
EXPLAIN (COSTS OFF) DELETE FROM w WHERE tag = '{"s": 1}';
EXPLAIN (COSTS OFF) UPDATE w SET tag = tag || '{"x": 1}' WHERE tag->>'s' = '2';
BEGIN;
DELETE FROM w WHERE tag = '{"s": 1}';
DELETE FROM w WHERE tag->>'s' = '7';
SELECT * FROM bucket_ids;
-- The series starts again in a new bucket.
INSERT INTO w ("time", tag, doc) VALUES ('2024-01-01 00:30', '{"s": 1}', '{"_id": 100}');
SELECT * FROM bucket_ids WHERE tag = '{"s": 1}';
ROLLBACK;

-- A bare DELETE empties the collection.
BEGIN;
DELETE FROM w;
SELECT count(*) FROM "system.buckets.w";
ROLLBACK;

-- Meta updates: the buckets move to the new series, stay separate buckets,
-- and take the new series' measurements.
BEGIN;
UPDATE w SET tag = '{"s": 0}' WHERE tag = '{"s": 1}';
UPDATE w SET tag = tag || '{"x": 1}' WHERE tag->>'s' = '2';
UPDATE w SET tag = NULL WHERE tag = '{"s": 9}';
SELECT * FROM bucket_ids;
INSERT INTO w ("time", tag, doc) VALUES ('2024-01-01 00:30', '{"s": 0}', '{"_id": 100}'),
                                        ('2024-01-01 00:30', '{"s": 1}', '{"_id": 101}');
SELECT * FROM bucket_ids;
SELECT tag, count(*) FROM w GROUP BY tag ORDER BY tag;
ROLLBACK;

-- Prepared statements, with a generic plan.
SET plan_cache_mode = force_generic_plan;
PREPARE by_time(timestamptz) AS DELETE FROM w WHERE "time" < $1;
PREPARE by_tag(jsonb, jsonb) AS UPDATE w SET tag = $2 WHERE tag = $1;
BEGIN;
EXECUTE by_time('2024-01-01 00:04');
EXECUTE by_time('2024-01-01 00:13');
EXECUTE by_tag('{"s": 2}', '{"s": 22}');
SELECT * FROM bucket_ids;
ROLLBACK;
RESET plan_cache_mode;

-- PL/pgSQL sees the measurement counts.
DO $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM w WHERE tag = '{"s": 0}' AND (doc->>'_id')::int < 20;
    GET DIAGNOSTICS n = ROW_COUNT;
    RAISE NOTICE 'deleted %', n;
    UPDATE w SET tag = '{"s": 5}' WHERE tag = '{"s": 1}';
    GET DIAGNOSTICS n = ROW_COUNT;
    RAISE NOTICE 'updated %', n;
    RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'undone';
EXCEPTION WHEN raise_exception THEN
    RAISE NOTICE 'rolled back';
END $$;
SELECT count(*) FROM w;

-- Refusals (0A000), with nothing written.
SELECT try($$UPDATE w SET doc = '{}'$$);
SELECT try($$UPDATE w SET "time" = now() WHERE tag = '{"s": 0}'$$);
SELECT try($$UPDATE w SET tag = '{}', doc = '{}'$$);
SELECT try($$UPDATE w SET tag = '{}' WHERE doc->>'f' = '1'$$);
SELECT try($$UPDATE w SET tag = '{}' WHERE "time" > '2024-01-01'$$);
SELECT try($$UPDATE w SET tag = doc->'f'$$);
SELECT try($$UPDATE w SET tag = '{}' WHERE w IS NOT NULL$$);
SELECT try($$WITH d AS (DELETE FROM w WHERE tag = '{"s": 0}') SELECT 1$$);
SELECT try($$DELETE FROM w WHERE random() < 0.5$$);
SELECT try($$DELETE FROM w USING wanted WHERE w.doc = wanted.tag$$);
SELECT try($$DELETE FROM w WHERE w IS NULL$$);
UPDATE w SET tag = '{}' WHERE doc->>'f' = '1';
SELECT count(*) FROM w;
-- Without a meta field nothing can be updated; deletes work.
SELECT tscoll.create_collection('nometa', 'time');
INSERT INTO nometa ("time", doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 minute', jsonb_build_object('v', i)
  FROM generate_series(0, 9) i;
SELECT try($$UPDATE nometa SET doc = '{}'$$);
DELETE FROM nometa WHERE (doc->>'v')::int >= 5;
DELETE FROM nometa WHERE "time" < '2024-01-01 00:02';
SELECT doc->>'v' AS v FROM nometa ORDER BY 1;
DELETE FROM nometa;

-- Privileges: the view's, checked for the user; the bucket table is
-- written as its owner.
CREATE ROLE update_delete_reader;
CREATE ROLE update_delete_writer;
GRANT SELECT ON w TO update_delete_reader, update_delete_writer;
GRANT UPDATE, DELETE ON w TO update_delete_writer;
SET ROLE update_delete_reader;
SELECT try($$DELETE FROM w WHERE tag = '{"s": 0}'$$);
SELECT try($$DELETE FROM w WHERE (doc->>'f')::int = 0$$);
SELECT try($$UPDATE w SET tag = '{}' WHERE tag = '{"s": 0}'$$);
SELECT try($$DELETE FROM "system.buckets.w"$$);
RESET ROLE;
BEGIN;
SET LOCAL ROLE update_delete_writer;
DELETE FROM w WHERE (doc->>'f')::int = 0;
UPDATE w SET tag = '{"s": 3}' WHERE tag = '{"s": 0}';
SELECT try($$DELETE FROM "system.buckets.w"$$);
SELECT tag, count(*) FROM w GROUP BY tag ORDER BY tag;
ROLLBACK;
REVOKE ALL ON w FROM update_delete_reader, update_delete_writer;
DROP ROLE update_delete_reader;
DROP ROLE update_delete_writer;

-- Fixed bucketing: time ranges aligned with the buckets delete them whole.
SELECT tscoll.create_collection('fixed', 'time', 'tag', bucket_max_span_seconds => 3600,
                                bucket_rounding_seconds => 3600);
INSERT INTO fixed ("time", tag, doc)
SELECT '2024-01-01'::timestamptz + i * interval '10 minutes', '"a"', '{}'
  FROM generate_series(0, 29) i;
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
DELETE FROM fixed WHERE "time" >= '2024-01-01 01:00' AND "time" < '2024-01-01 03:00';
SELECT min_time, max_time, control->'count' AS n FROM "system.buckets.fixed" ORDER BY min_time;
ROLLBACK;
DELETE FROM fixed WHERE "time" >= '2024-01-01 01:00' AND "time" < '2024-01-01 03:00';
SELECT count(*), min("time"), max("time") FROM fixed;
