-- Tails (doc/ARCHITECTURE.md, "Tails"; SPEC §7): an append to a stored
-- bucket is written as a row of its own and folded in later, yet every read
-- sees it, and the buckets are those a bulk insert makes (SPEC §4.1).
\i test/setup.psql
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- 2,400 measurements of 8 series, time-major, 30 s apart per series; every
-- 50th arrives 7 minutes late; series s3's "x" turns from a number into a
-- string halfway (a schema change). "_id" is given, so that the buckets of
-- two collections can be compared whole.
CREATE TABLE source AS
SELECT i, jsonb_build_object(
           '_id', i,
           't', to_char(timestamptz '2024-03-01 00:00:00+00' + (i / 8) * interval '30 s'
                        - CASE WHEN i % 50 = 49 THEN interval '7 min' ELSE interval '0' END,
                        'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'm', 's' || i % 8,
           'v', (i * 37 % 1000) / 10.0,
           'x', CASE WHEN i % 8 = 3 AND i >= 1200 THEN to_jsonb('x' || i) ELSE to_jsonb(i) END,
           'note', md5(i::text)) AS doc
  FROM generate_series(0, 2399) i;

SELECT tscoll.create_collection('by_copy', 't', 'm');
SELECT tscoll.create_collection('by_thousand', 't', 'm');
SELECT tscoll.create_collection('by_row', 't', 'm');

\copy (SELECT doc FROM source ORDER BY i) TO '/tmp/tscoll_regress_tails.ndjson'
\copy by_copy (doc) FROM '/tmp/tscoll_regress_tails.ndjson'
INSERT INTO by_thousand (doc) SELECT doc FROM source WHERE i < 1000 ORDER BY i;
INSERT INTO by_thousand (doc) SELECT doc FROM source WHERE i >= 1000 AND i < 2000 ORDER BY i;
INSERT INTO by_thousand (doc) SELECT doc FROM source WHERE i >= 2000 ORDER BY i;
DO $$
DECLARE d jsonb;
BEGIN
    FOR d IN SELECT doc FROM source ORDER BY i LOOP
        INSERT INTO by_row (doc) VALUES (d);
    END LOOP;
END $$;

-- Single rows left tails on disk, each bucket with fewer than 64, and
-- only in its series' open bucket (the latest): a bucket that stopped
-- being open was folded.
SELECT count(*) > 0 AS has_tails FROM "system.buckets.by_row" WHERE control ? 'tail';
SELECT max(n) < 64 AS bounded FROM (
    SELECT count(*) AS n FROM "system.buckets.by_row" WHERE control ? 'tail'
     GROUP BY control->'tail'->>'bucket') t;
SELECT count(*) AS tails_of_closed_buckets FROM "system.buckets.by_row" t
 WHERE control ? 'tail'
   AND EXISTS (SELECT FROM "system.buckets.by_row" b
                WHERE b.meta = t.meta AND b.min_time > t.min_time AND NOT b.control ? 'tail');

-- The same buckets, however the measurements were batched.
CREATE FUNCTION buckets_of(c regclass) RETURNS TABLE (meta jsonb, control jsonb, data jsonb)
    LANGUAGE sql AS $$ SELECT meta, control, data FROM tscoll.buckets(c) $$;
SELECT (SELECT count(*) FROM buckets_of('by_copy')) AS buckets,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('by_copy')
                              EXCEPT SELECT * FROM buckets_of('by_row')) d) AS copy_not_row,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('by_row')
                              EXCEPT SELECT * FROM buckets_of('by_copy')) d) AS row_not_copy,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('by_thousand')
                              EXCEPT SELECT * FROM buckets_of('by_copy')) d) AS thousand_not_copy,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('by_copy')
                              EXCEPT SELECT * FROM buckets_of('by_thousand')) d) AS copy_not_thousand;
SELECT c, s->'bucketCount' AS buckets, s->'numMeasurements' AS measurements,
       s->'numCommits' AS commits
  FROM unnest(ARRAY['by_copy', 'by_thousand', 'by_row']) c, tscoll.collection_stats(c) s;

-- Every read path sees the tails: each query gives by_row what it gives
-- by_copy (float8 sums rounded: partial sums per bucket row add up in
-- another order).
CREATE FUNCTION differs(query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d',
                   format(query, 'by_row'), format(query, 'by_copy')) INTO a;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) d',
                   format(query, 'by_copy'), format(query, 'by_row')) INTO b;
    RETURN a + b;
END $$;
SELECT q, differs(q) FROM unnest(ARRAY[
    'SELECT t, m, doc FROM %s',
    'SELECT count(*) FROM %s',
    'SELECT m, count(*), max((doc->>''v'')::float8), round(avg((doc->>''v'')::float8)::numeric, 9) FROM %s GROUP BY m',
    'SELECT date_trunc(''hour'', t), max((doc->>''v'')::float8) FROM %s GROUP BY 1',
    'SELECT * FROM (SELECT DISTINCT ON (m) m, t, doc FROM %s ORDER BY m, t DESC) l',
    'SELECT * FROM (SELECT t, doc->>''_id'' FROM %s ORDER BY t DESC, doc->>''_id'' LIMIT 5) l',
    'SELECT t, doc->>''_id'' FROM %s WHERE t >= ''2024-03-01 02:30:00+00'' AND (doc->>''v'')::float8 > 50',
    'SELECT max(t), min(t) FROM %s',
    'SELECT t, doc->>''_id'' FROM %s WHERE t < ''2024-03-01 02:40:00+00''',
    'SELECT t, doc->>''_id'' FROM %s WHERE t <= ''2024-03-01 02:29:00+00'' AND t > ''2024-03-01 02:20:00+00''',
    'SELECT doc->>''_id'' FROM %s WHERE t = ''2024-03-01 02:29:30+00''',
    'SELECT doc->>''_id'' FROM %s WHERE t IN (''2024-03-01 02:29:00+00'', ''2024-03-01 02:29:30+00'')',
    'SELECT max(t) FROM %s',
    'SELECT m, max(t) FROM %s GROUP BY m',
    'SELECT * FROM (SELECT t, doc->>''_id'' FROM %s WHERE m = ''"s2"'' ORDER BY t DESC LIMIT 3) l',
    'SELECT * FROM (SELECT t, doc->>''_id'' FROM %s ORDER BY t, doc->>''_id'' LIMIT 5) l',
    'SELECT * FROM (SELECT date_trunc(''minute'', t), count(*) FROM %s GROUP BY 1 ORDER BY 1 DESC LIMIT 3) l',
    'SELECT doc->>''_id'' FROM %s WHERE m = ''"s3"'' AND doc->>''x'' LIKE ''x%%''']) q;

-- A DELETE of measurements, a meta update, expiry: tails are rows like any other.
DELETE FROM by_row WHERE (doc->>'_id')::int % 10 = 0;
DELETE FROM by_copy WHERE (doc->>'_id')::int % 10 = 0;
-- A tail that keeps some of its measurements stays a tail of its bucket,
-- counted once.
SELECT tscoll.create_collection('tailed', 't', 'm');
INSERT INTO tailed (t, m, doc) SELECT timestamptz '2024-03-01' + i * interval '1 s', '"a"',
                                      jsonb_build_object('i', i, 'pad', md5(i::text))
                                 FROM generate_series(1, 20) i;
INSERT INTO tailed (t, m, doc) SELECT timestamptz '2024-03-01' + i * interval '1 s', '"a"',
                                      jsonb_build_object('i', i) FROM generate_series(21, 30) i;
DELETE FROM tailed WHERE (doc->>'i')::int IN (5, 22, 25);
SELECT control ? 'tail' AS tail, control->'count' AS count, control->'max'->'t' AS max
  FROM "system.buckets.tailed" ORDER BY control ? 'tail', _id;
SELECT tscoll.collection_stats('tailed')->'bucketCount' AS buckets,
       (SELECT control->'count' FROM tscoll.buckets('tailed')) AS measurements,
       (SELECT count(*) FROM tailed) AS rows;
SELECT tscoll.drop_collection('tailed');
UPDATE by_row SET m = '"renamed"' WHERE m = '"s1"';
UPDATE by_copy SET m = '"renamed"' WHERE m = '"s1"';
SELECT differs('SELECT t, m, doc FROM %s');
-- Appends after these go on as before; folding keeps every measurement.
DO $$
DECLARE d jsonb;
BEGIN
    FOR d IN SELECT doc || jsonb_build_object('_id', (doc->>'_id')::int + 10000,
                                              't', to_char(timestamptz '2024-03-01 05:00:00+00'
                                                           + i * interval '1 s',
                                                           'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
               FROM source WHERE i % 8 IN (1, 2) ORDER BY i LOOP
        INSERT INTO by_row (doc) VALUES (d);
    END LOOP;
END $$;
INSERT INTO by_copy (doc)
SELECT doc || jsonb_build_object('_id', (doc->>'_id')::int + 10000,
                                 't', to_char(timestamptz '2024-03-01 05:00:00+00' + i * interval '1 s',
                                              'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
  FROM source WHERE i % 8 IN (1, 2) ORDER BY i;
SELECT differs('SELECT t, m, doc FROM %s');
SELECT (SELECT count(*) FROM by_row) AS measurements,
       (SELECT sum((control->>'count')::int) FROM tscoll.buckets('by_row')) AS in_buckets;
-- Folding on demand (a series that stopped receiving data keeps its open
-- bucket's tails until then): every tail written into its bucket, the same
-- measurements and buckets; appends go on after it; only the owner folds.
SELECT count(*) > 0 AS had_tails FROM "system.buckets.by_row" WHERE control ? 'tail';
SELECT tscoll.fold_tails('by_row') > 0 AS folded;
SELECT count(*) AS tails_left FROM "system.buckets.by_row" WHERE control ? 'tail';
SELECT differs('SELECT t, m, doc FROM %s');
SELECT (SELECT count(*) FROM (SELECT * FROM buckets_of('by_copy')
                              EXCEPT SELECT * FROM buckets_of('by_row')) d) AS copy_not_row,
       (SELECT count(*) FROM (SELECT * FROM buckets_of('by_row')
                              EXCEPT SELECT * FROM buckets_of('by_copy')) d) AS row_not_copy;
SELECT tscoll.fold_tails('by_row') AS folded_again;
INSERT INTO by_row (doc) SELECT doc || '{"_id": 20000}' FROM source WHERE i = 2399;
INSERT INTO by_row (doc) SELECT doc || '{"_id": 20001}' FROM source WHERE i = 2399;
INSERT INTO by_copy (doc) SELECT doc || jsonb_build_object('_id', 20000 + g) FROM source, generate_series(0, 1) g
                           WHERE i = 2399;
SELECT differs('SELECT t, m, doc FROM %s');
-- Writers compute min_time and max_time from the control themselves: on
-- every row written so (buckets, tails, merged tails, folded buckets) they
-- are what the columns' expressions give. A tail's max_time is its
-- bucket's start plus the span (an hour), a bound no append moves; its
-- latest time is control.max ('latest'), as a bucket row's max_time is.
-- With another generated column of a hand-added expression, PostgreSQL
-- computes them all.
SELECT count(*) > 0 AS has_rows, count(*) FILTER (WHERE control ? 'tail') > 0 AS has_tails,
       count(*) FILTER (WHERE min_time IS DISTINCT FROM tscoll._control_time(control, 'min', 't')
                           OR max_time IS DISTINCT FROM tscoll._control_time(control, 'max', 't'))
         AS disagree,
       count(*) FILTER (WHERE control ? 'tail' AND max_time <> min_time + interval '1 hour')
         AS unbounded_tails,
       count(*) FILTER (WHERE NOT control ? 'tail'
                          AND max_time <> tscoll._control_time(control, 'latest', 't'))
         AS inexact_buckets
  FROM "system.buckets.by_row";
ALTER TABLE "system.buckets.by_row" ADD COLUMN span interval GENERATED ALWAYS AS
    (tscoll._control_time(control, 'latest', 't') - tscoll._control_time(control, 'min', 't')) STORED;
INSERT INTO by_row (doc) SELECT doc || jsonb_build_object('_id', 20010 + g) FROM source,
    generate_series(0, 39) g WHERE i = 2398;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE span IS DISTINCT FROM tscoll._control_time(control, 'latest', 't')
                                                    - min_time
                           OR max_time IS DISTINCT FROM tscoll._control_time(control, 'max', 't'))
         AS disagree
  FROM "system.buckets.by_row";
ALTER TABLE "system.buckets.by_row" DROP COLUMN span;
CREATE ROLE tails_stranger;
SET ROLE tails_stranger;
SELECT try($$SELECT tscoll.fold_tails('by_row')$$);
RESET ROLE;
DROP ROLE tails_stranger;
SELECT tscoll.coll_mod('by_row', '{"expireAfterSeconds": 1}');
SELECT tscoll.coll_mod('by_copy', '{"expireAfterSeconds": 1}');
SELECT tscoll.run_ttl_pass() >= 0 AS ran;
SELECT count(*) AS rows_left FROM "system.buckets.by_row";
SELECT tscoll.drop_collection('by_row');
SELECT count(*) FROM pg_class WHERE relname = 'system.buckets.by_row';
-- Appends written in place find their tail where the writers last saw it
-- (the session's state, the shared catalog's summary), and through the
-- index when it is not there: after VACUUM FULL moves every row, and after
-- another session wrote into the tail.
SELECT tscoll.create_collection('moved', 't', 'm');
INSERT INTO moved (t, m, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 second', '"a"',
       jsonb_build_object('v', i, 'r', md5(i::text) || md5((-i)::text))
  FROM generate_series(1, 40) i;
INSERT INTO moved (t, m, doc) VALUES ('2024-01-01 00:01:00+00', '"a"', '{"v": 41}');
INSERT INTO moved (t, m, doc) VALUES ('2024-01-01 00:01:01+00', '"a"', '{"v": 42}');
VACUUM FULL "system.buckets.moved";
INSERT INTO moved (t, m, doc) VALUES ('2024-01-01 00:01:02+00', '"a"', '{"v": 43}');
\c
INSERT INTO moved (t, m, doc) VALUES ('2024-01-01 00:01:03+00', '"a"', '{"v": 44}');
SELECT count(*) AS measurements, count(DISTINCT doc->>'v') AS distinct_v,
       string_agg(doc->>'v', ',' ORDER BY t) FILTER (WHERE (doc->>'v')::int > 40) AS appended
  FROM moved;
SELECT count(*) AS tails, string_agg(control->>'count', ',') AS tail_counts,
       string_agg(control->'tail'->>'first' || '-' || (control->'tail'->>'seq'), ',') AS appends
  FROM "system.buckets.moved" WHERE control ? 'tail';
SELECT tscoll.drop_collection('moved');
-- An append is written in place only as a heap-only version on the tail's
-- page. Inside one transaction a tail's earlier versions stay on its page
-- until it commits, so 12 series with metas of 600 bytes, each statement
-- appending one reading to each, fill their tails' pages: an append whose
-- tail's page has no room left takes a tail of its own (more than two
-- tails per series for 30 appends). Every measurement reads back once.
SELECT tscoll.create_collection('crowded', 't', 'm');
INSERT INTO crowded (t, m, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 second',
       jsonb_build_object('s', s, 'pad', repeat(md5(s::text), 19)),
       jsonb_build_object('v', i, 'r', md5(i::text))
  FROM generate_series(1, 12) s, generate_series(1, 40) i;
BEGIN;
DO $$
BEGIN
    FOR i IN 41..70 LOOP
        INSERT INTO crowded (t, m, doc)
        SELECT '2024-01-01'::timestamptz + i * interval '1 second',
               jsonb_build_object('s', s, 'pad', repeat(md5(s::text), 19)),
               jsonb_build_object('v', i, 'r', md5(i::text))
          FROM generate_series(1, 12) s;
    END LOOP;
END $$;
SELECT n_tup_upd > 100 AS written_in_place
  FROM pg_stat_xact_user_tables WHERE relname = 'system.buckets.crowded';
COMMIT;
SELECT count(*) AS measurements, count(DISTINCT (m->>'s', doc->>'v')) AS distinct_readings,
       min((doc->>'v')::int), max((doc->>'v')::int)
  FROM crowded;
SELECT count(*) FILTER (WHERE control ? 'tail') > 24 AS tails_beyond_two_per_series,
       max((control->>'count')::int) FILTER (WHERE control ? 'tail') <= 16 AS at_most_16
  FROM "system.buckets.crowded";
SELECT tscoll.drop_collection('crowded');
