-- Inserts deferred to the end of their transaction (doc/REFERENCE.md,
-- Deferred inserts): inside a transaction block, a statement that only
-- inserts into a collection leaves its measurements gathered; the next
-- statement that is not such an insert, the commit or a PREPARE writes
-- them. Every statement sees what the earlier ones inserted, the buckets
-- and counters are those of one statement at a time, and a rollback
-- (of the transaction or to a savepoint) takes exactly its own rows.
\i test/setup.psql
SET TimeZone = 'UTC';

-- Two collections loaded with the same 150 readings of 3 series (out of
-- order, with a schema change), one statement per reading: one in
-- autocommit, one in a transaction block. Same buckets, same counters.
CREATE TABLE readings AS
SELECT i, '2024-01-01'::timestamptz + ((i * 37) % 150) * interval '1 min' AS t,
       to_jsonb(i % 3) AS m,
       CASE WHEN i = 100 THEN jsonb_build_object('v', 'text') ELSE jsonb_build_object('v', i) END AS doc
  FROM generate_series(1, 150) i;
SELECT tscoll.create_collection('each', 't', 'm');
SELECT tscoll.create_collection('deferred', 't', 'm');
SET tscoll.bucket_max_count = 20;
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT * FROM readings ORDER BY i LOOP
        INSERT INTO each (t, m, doc) VALUES (r.t, r.m, r.doc);
    END LOOP;
END $$;
BEGIN;
-- one INSERT per reading, in the readings' order (150 statements, not shown)
\set ECHO none
SELECT format('INSERT INTO deferred (t, m, doc) VALUES (%L, %L, %L)', t, m, doc) FROM readings ORDER BY i
\gexec
\set ECHO all
-- This query wrote them first: each bucket once (150 statements, one row
-- written per bucket, none written again).
SELECT count(*) AS seen_in_the_transaction,
       pg_stat_get_xact_tuples_inserted('"system.buckets.deferred"'::regclass) AS bucket_rows_inserted,
       pg_stat_get_xact_tuples_updated('"system.buckets.deferred"'::regclass) AS bucket_rows_updated
  FROM deferred;
COMMIT;
RESET tscoll.bucket_max_count;
SELECT (SELECT array_agg(x ORDER BY x) FROM (SELECT meta::text || ' ' || (control->>'count') || ' ' || (control->'min'->>'t') AS x FROM tscoll.buckets('each')) a)
     = (SELECT array_agg(x ORDER BY x) FROM (SELECT meta::text || ' ' || (control->>'count') || ' ' || (control->'min'->>'t') AS x FROM tscoll.buckets('deferred')) b)
       AS same_buckets,
       (SELECT count(*) FROM tscoll.buckets('deferred')) AS buckets;
SELECT key, e.value AS each, d.value AS deferred
  FROM jsonb_each(tscoll.collection_stats('each')) e
  JOIN jsonb_each(tscoll.collection_stats('deferred')) d USING (key)
 WHERE key LIKE 'num%' AND e.value <> d.value;
SELECT (SELECT array_agg(doc - '_id' ORDER BY t, doc::text) FROM each)
     = (SELECT array_agg(doc - '_id' ORDER BY t, doc::text) FROM deferred) AS same_measurements;

-- Read-your-writes, whatever reads: a query, a function, the bucket
-- table, COPY TO, a cursor, REPEATABLE READ.
SELECT tscoll.create_collection('ryw', 't', 'm');
CREATE FUNCTION ryw_count() RETURNS bigint LANGUAGE plpgsql AS
$$ BEGIN RETURN (SELECT count(*) FROM ryw); END $$;
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:00', '1', '{"v": 1}');
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:01', '1', '{"v": 2}');
SELECT ryw_count();
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:02', '1', '{"v": 3}');
SELECT sum((control->>'count')::int) FROM "system.buckets.ryw";
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:03', '1', '{"v": 4}');
COPY (SELECT doc - '_id' FROM ryw ORDER BY t) TO STDOUT;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:04', '1', '{"v": 5}');
DECLARE c CURSOR FOR SELECT doc->>'v' AS v FROM ryw ORDER BY t DESC;
FETCH 1 FROM c;
CLOSE c;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM ryw;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:05', '1', '{"v": 6}');
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-01 00:06', '1', '{"v": 7}');
SELECT count(*), max(doc->>'v') FROM ryw;
COMMIT;

-- Rollbacks: of the transaction, and to a savepoint (which writes what
-- was deferred before it, and whose own inserts are written as they end).
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-02 00:00', '2', '{"v": "rolled back"}');
ROLLBACK;
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-03 00:00', '3', '{"v": "kept 1"}');
SAVEPOINT s;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-03 00:01', '3', '{"v": "rolled back"}');
ROLLBACK TO SAVEPOINT s;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-03 00:02', '3', '{"v": "kept 2"}');
SAVEPOINT t;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-03 00:03', '3', '{"v": "kept 3"}');
RELEASE SAVEPOINT t;
COMMIT;
SELECT m, doc->>'v' AS v FROM ryw WHERE m <> '1' ORDER BY t;
-- A bad row fails its statement, and the transaction with what it deferred.
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-04 00:00', '4', '{"v": "lost with the transaction"}');
INSERT INTO ryw (t, m, doc) VALUES (NULL, '4', '{}');
COMMIT;
SELECT count(*) FROM ryw WHERE m = '4';

-- A measurement that might not fit an index entry is written by its own
-- statement, which then raises the error of a value too large for its
-- index (54000), not the COMMIT.
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-04 00:00', '4', '{}');
INSERT INTO ryw (t, m)
    SELECT '2024-01-04 00:01', jsonb_build_object('k', string_agg(md5(i::text), ''))
      FROM generate_series(1, 200) i;
ROLLBACK;

-- A multi-statement query string is a transaction block too.
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-05 00:00', '5', '{}') \; INSERT INTO ryw (t, m, doc) VALUES ('2024-01-05 00:01', '5', '{}') \; SELECT count(*) AS in_the_string FROM ryw WHERE m = '5';

-- PREPARE TRANSACTION writes them; its COMMIT PREPARED makes them visible.
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-06 00:00', '6', '{}');
PREPARE TRANSACTION 'deferred_inserts';
SELECT count(*) AS before_commit_prepared FROM ryw WHERE m = '6';
COMMIT PREPARED 'deferred_inserts';
SELECT count(*) AS after_commit_prepared FROM ryw WHERE m = '6';

-- Not deferred, with the same result: with the setting off, and an insert
-- calling a function of the user's (each writes its rows when it ends).
CREATE FUNCTION ryw_doc(i int) RETURNS jsonb LANGUAGE sql AS $$ SELECT jsonb_build_object('v', i) $$;
BEGIN;
SET LOCAL tscoll.defer_inserts = off;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-07 00:00', '7', '{}');
COMMIT;
BEGIN;
INSERT INTO ryw (t, m, doc) VALUES ('2024-01-07 00:01', '7', ryw_doc(1));
COMMIT;
SELECT count(*) FROM ryw WHERE m = '7';

-- A procedure that commits and rolls back on its own.
CREATE PROCEDURE ryw_load() LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..5 LOOP
        INSERT INTO ryw (t, m, doc) VALUES ('2024-01-09'::timestamptz + i * interval '1 s', '9', jsonb_build_object('v', i));
        IF i % 2 = 0 THEN COMMIT; END IF;
    END LOOP;
    INSERT INTO ryw (t, m, doc) VALUES ('2024-01-09 00:01', '9', '{"v": 6}');
    ROLLBACK;
    INSERT INTO ryw (t, m, doc) VALUES ('2024-01-09 00:02', '9', '{"v": 7}');
END $$;
CALL ryw_load();
SELECT string_agg(doc->>'v', ',' ORDER BY t) AS kept FROM ryw WHERE m = '9';
DROP PROCEDURE ryw_load();

-- A rollup sees what the commit wrote.
SELECT tscoll.create_collection('rolled', 't', 'm');
SELECT tscoll.create_rollup('rolled_hourly', 'rolled', '1 hour', '[]', '{"v": ["count", "sum"]}');
BEGIN;
INSERT INTO rolled (t, m, doc) VALUES ('2024-01-08 00:00', '8', '{"v": 1}');
INSERT INTO rolled (t, m, doc) VALUES ('2024-01-08 00:01', '8', '{"v": 2}');
INSERT INTO rolled (t, m, doc) VALUES ('2024-01-08 01:00', '8', '{"v": 4}');
COMMIT;
SELECT * FROM rolled_hourly ORDER BY 1;
SELECT tscoll.drop_rollup('rolled_hourly');
SELECT tscoll.drop_collection('rolled');

SELECT tscoll.drop_collection('each');
SELECT tscoll.drop_collection('deferred');
SELECT tscoll.drop_collection('ryw');
DROP FUNCTION ryw_count();
DROP FUNCTION ryw_doc(int);
DROP TABLE readings;
