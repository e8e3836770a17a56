-- Folds give the space of what they delete back before VACUUM
-- (doc/ARCHITECTURE.md, "Tails", Reclaiming; src/pg/storage/reclaim.cpp).
-- Whatever happens to the transaction that folded, no measurement is lost:
-- a meta stored out of line (its index key is read at the fold), folds
-- undone by a savepoint and by a rollback, the default index dropped
-- between folds (tails are then found by _id). Each statement below is a
-- transaction of its own unless said otherwise; the statements \gexec runs
-- are not echoed.
\i test/setup.psql
SET TimeZone = 'UTC';
SET tscoll.bucket_max_count = 40;

CREATE TABLE expected (t timestamptz, m text, v int);
CREATE FUNCTION rows_of(c regclass) RETURNS TABLE (t timestamptz, m text, v int) LANGUAGE plpgsql AS $$
BEGIN
    IF c = 'wide'::regclass THEN
        RETURN QUERY SELECT w.t, w.m->>'series', (w.doc->>'v')::int FROM wide w;
    ELSE
        RETURN QUERY EXECUTE format('SELECT t, m #>> ''{}'', (doc->>''v'')::int FROM %s', c);
    END IF;
END $$;
CREATE FUNCTION lost(c regclass) RETURNS TABLE (missing bigint, extra bigint) LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM (SELECT t, m, v FROM expected WHERE m LIKE c::text || '%'
                                  EXCEPT ALL SELECT t, m, v FROM rows_of(c)) d),
           (SELECT count(*) FROM (SELECT t, m, v FROM rows_of(c)
                                  EXCEPT ALL SELECT t, m, v FROM expected WHERE m LIKE c::text || '%') d)
$$;
-- Statement k: 3 measurements for each of 2 series, 10 s apart.
CREATE FUNCTION batch(c text, k int) RETURNS TABLE (t timestamptz, m text, v int) LANGUAGE sql AS $$
    SELECT timestamptz '2024-01-01 00:00:00+00' + ((k * 3 + i) * 10) * interval '1 s',
           c || '-' || s, k * 100 + i * 10 + s
      FROM generate_series(0, 2) i, generate_series(0, 1) s
$$;
-- Statements first..last into collection c, one INSERT each (for \gexec);
-- `meta` makes the meta value from the series name m.
CREATE FUNCTION statements(c text, first int, last int, meta text DEFAULT 'to_jsonb(m)')
    RETURNS SETOF text LANGUAGE sql AS $$
    SELECT format('INSERT INTO %s (t, m, doc) SELECT t, %s, jsonb_build_object(''v'', v) '
                  'FROM batch(%L, %s)', c, meta, c, k)
      FROM generate_series(first, last) k
$$;

-- A meta of about 2.4 kB of incompressible text: stored out of line.
SELECT tscoll.create_collection('wide', 't', 'm');
CREATE FUNCTION wide_meta(series text) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('series', series) ||
           (SELECT jsonb_object_agg('k' || g, md5(series || g)) FROM generate_series(1, 55) g)
$$;
\set ECHO none
SELECT statements('wide', 0, 59, 'wide_meta(m)') \gexec
\set ECHO all
INSERT INTO expected SELECT b.* FROM generate_series(0, 59) k, batch('wide', k) b;
SELECT pg_column_size(meta) > 2000 AS meta_large, count(*) > 0 AS has_buckets
  FROM "system.buckets.wide" GROUP BY 1;
SELECT * FROM lost('wide');

-- Folds inside subtransactions, every third one undone; then folds in a
-- transaction that is rolled back. Later statements reclaim what the
-- committed ones noted, and only that.
SELECT tscoll.create_collection('undone', 't', 'm');
DO $$
BEGIN
    FOR k IN 0..44 LOOP
        BEGIN
            INSERT INTO undone (t, m, doc)
            SELECT t, to_jsonb(m), jsonb_build_object('v', v) FROM batch('undone', k);
            IF k % 3 = 2 THEN
                RAISE EXCEPTION 'undo';
            END IF;
            INSERT INTO expected SELECT * FROM batch('undone', k);
        EXCEPTION WHEN raise_exception THEN
            NULL;
        END;
    END LOOP;
END $$;
BEGIN;
\set ECHO none
SELECT statements('undone', 45, 74) \gexec
\set ECHO all
ROLLBACK;
\set ECHO none
SELECT statements('undone', 75, 104) \gexec
\set ECHO all
INSERT INTO expected SELECT b.* FROM generate_series(75, 104) k, batch('undone', k) b;
SELECT * FROM lost('undone');
SELECT tscoll.fold_tails('undone') >= 0 AS folded;
SELECT * FROM lost('undone');

-- The default index dropped while buckets have tails: the tails written
-- with it and those written without it are all found, folded and counted
-- (at a rollover, then on demand).
SET tscoll.bucket_max_count = 200;
SELECT tscoll.create_collection('unindexed', 't', 'm');
\set ECHO none
SELECT statements('unindexed', 0, 20) \gexec
\set ECHO all
SELECT count(*) > 0 AS had_tails FROM "system.buckets.unindexed" WHERE control ? 'tail';
SELECT tscoll.drop_index('unindexed', name)
  FROM tscoll.list_indexes('unindexed') i, json_extract_path_text(i, 'name') name
 WHERE name <> '_id_';
\set ECHO none
SELECT statements('unindexed', 21, 99) \gexec
\set ECHO all
INSERT INTO expected SELECT b.* FROM generate_series(0, 99) k, batch('unindexed', k) b;
SELECT * FROM lost('unindexed');
SELECT max(n) <= 200 AS bucket_count_limit, count(*) AS buckets FROM (
    SELECT sum((control->>'count')::int) AS n FROM "system.buckets.unindexed"
     GROUP BY coalesce(control->'tail'->>'bucket', _id::text)) b;
SELECT tscoll.fold_tails('unindexed') >= 0 AS folded;
SELECT count(*) AS tails_left FROM "system.buckets.unindexed" WHERE control ? 'tail';
SELECT * FROM lost('unindexed');

SELECT tscoll.drop_collection('wide');
SELECT tscoll.drop_collection('undone');
SELECT tscoll.drop_collection('unindexed');
