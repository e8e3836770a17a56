-- A statement larger than its flushes (16 MB of BSON) carries the buckets
-- it created and that are still open to the next flush, as values up to
-- 16 MB and packed past that (doc/ARCHITECTURE.md, Writing): each bucket is
-- written once, and the buckets are those of smaller statements.
\i test/setup.psql
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- 1,200 series of 150 readings (about 270 bytes of BSON each, 48 MB in
-- all), time-major, 10 s apart: every bucket stays open through the whole
-- statement, so its flushes carry more than 16 MB of them. "_id" is
-- given, so that the buckets of two collections can be compared whole.
CREATE TABLE source AS
SELECT i, jsonb_build_object(
           '_id', i,
           't', to_char(timestamptz '2024-03-01 00:00:00+00' + (i / 1200) * interval '10 s',
                        'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'm', i % 1200,
           'v', (i * 37 % 1000) / 10.0,
           'pad', repeat(chr(97 + i % 26), 200)) AS doc
  FROM generate_series(0, 179999) i;

SELECT tscoll.create_collection('whole', 't', 'm');
SELECT tscoll.create_collection('parts', 't', 'm');
INSERT INTO whole (doc) SELECT doc FROM source ORDER BY i;
-- The same readings in statements of 1,200 series x 10 readings, 3 MB each.
DO $$
BEGIN
    FOR part IN 0..14 LOOP
        INSERT INTO parts (doc) SELECT doc FROM source WHERE i / 12000 = part ORDER BY i;
    END LOOP;
END
$$;

-- Written once: one insert per bucket, no update, no tail.
SELECT s->'bucketCount' AS buckets, s->'numBucketInserts' AS inserts,
       s->'numBucketUpdates' AS updates, s->'numMeasurements' AS measurements
  FROM tscoll.collection_stats('whole') s;
SELECT count(*) FILTER (WHERE control ? 'tail') AS tails FROM "system.buckets.whole";

-- The same buckets, measurements and reads as the smaller statements.
SELECT tscoll.fold_tails('parts') >= 0 AS folded;
CREATE FUNCTION buckets_of(c regclass) RETURNS TABLE (meta jsonb, control jsonb, data jsonb)
    LANGUAGE sql AS $$ SELECT meta, control, data FROM tscoll.buckets(c) $$;
SELECT (SELECT count(*) FROM (SELECT * FROM buckets_of('whole')
                              EXCEPT SELECT * FROM buckets_of('parts')) d) AS whole_not_parts,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('parts')
                              EXCEPT SELECT * FROM buckets_of('whole')) d) AS parts_not_whole;
SELECT (SELECT count(*) FROM whole) AS whole,
       (SELECT count(*) FROM (SELECT m, t, doc FROM whole EXCEPT SELECT m, t, doc FROM parts) d)
           AS differing,
       (SELECT sum((doc->>'v')::numeric) FROM whole) = (SELECT sum((doc->>'v')::numeric) FROM source)
           AS same_sum;

SELECT tscoll.drop_collection('whole');
SELECT tscoll.drop_collection('parts');
DROP TABLE source;
DROP FUNCTION buckets_of(regclass);
