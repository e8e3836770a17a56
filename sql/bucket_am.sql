-- The tscoll_buckets table access method does everything heap does on a
-- bucket table: INSERT, COPY, every scan kind, index builds (also
-- CONCURRENTLY), UPDATE, DELETE, VACUUM, ANALYZE, CLUSTER, TRUNCATE.
\i test/setup.psql
SELECT tscoll.create_collection('w', 't', 'm');

-- Rows written directly must be valid buckets: their data is taken from
-- one-measurement buckets of another collection (sizes up to 6 kB, so some
-- rows are TOASTed), their control is written here. The _ids are given, so
-- that the sizes below do not depend on a generated id's counter.
SELECT tscoll.create_collection('src', 't', 'm');
INSERT INTO src (doc)
SELECT jsonb_build_object('_id', i,
                          't', to_char(to_timestamp(1600000000 + i * 3600) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"'),
                          'm', i, 's', repeat(md5(i::text), i % 200))
  FROM generate_series(1, 5000) i;
CREATE FUNCTION bucket_row(i int) RETURNS TABLE (_id tscoll.objectid, meta jsonb, control jsonb, data bytea)
    LANGUAGE sql AS $$
    SELECT (lpad(to_hex(1600000000 + i * 3600), 8, '0') || lpad(to_hex(i), 16, '0'))::tscoll.objectid,
           jsonb_build_object('host', i % 10),
           jsonb_build_object('version', 1, 'count', 1,
               'min', jsonb_build_object('t', to_char(to_timestamp(1600000000 + i * 3600) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"')),
               'max', jsonb_build_object('t', to_char(to_timestamp(1600000000 + i * 3600 + 59) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"'))),
           (SELECT b.data FROM "system.buckets.src" b WHERE b.meta = to_jsonb(i)) $$;
INSERT INTO "system.buckets.w" (_id, meta, control, data) SELECT b.* FROM generate_series(1, 5000) i, bucket_row(i) b;
SELECT count(*), min(min_time), max(max_time), sum(length(data)) FROM "system.buckets.w";
-- TOAST tables of bucket tables are plain heap.
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = '"system.buckets.w"'::regclass);

-- Index builds: btree, hash, GIN, BRIN, concurrently, and reindex.
CREATE INDEX w_min_time ON "system.buckets.w" (min_time);
CREATE INDEX w_hash ON "system.buckets.w" USING hash (_id);
CREATE INDEX w_gin ON "system.buckets.w" USING gin (meta);
CREATE INDEX w_brin ON "system.buckets.w" USING brin (min_time);
CREATE INDEX CONCURRENTLY w_max_time ON "system.buckets.w" (max_time);
REINDEX TABLE "system.buckets.w";
REINDEX TABLE CONCURRENTLY "system.buckets.w";
ANALYZE "system.buckets.w";
SELECT reltuples FROM pg_class WHERE oid = '"system.buckets.w"'::regclass;

-- Every scan kind returns the same rows.
CREATE FUNCTION scan(kind text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text[];
    n bigint;
BEGIN
    PERFORM set_config('enable_seqscan', (kind = 'seq')::text, true);
    PERFORM set_config('enable_indexscan', (kind = 'index')::text, true);
    PERFORM set_config('enable_bitmapscan', (kind = 'bitmap')::text, true);
    PERFORM set_config('enable_indexonlyscan', (kind = 'index')::text, true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT count(*) FROM "system.buckets.w" WHERE min_time < ''2020-09-20'' AND meta @> ''{"host": 3}''' LOOP
        -- the plan nodes only
        CONTINUE WHEN line NOT LIKE '%->%' AND line NOT LIKE 'Aggregate%';
        plan := plan || trim(replace(line, '->', ''));
    END LOOP;
    EXECUTE 'SELECT count(*) FROM "system.buckets.w" WHERE min_time < ''2020-09-20'' AND meta @> ''{"host": 3}''' INTO n;
    RETURN format('%s: %s rows (%s)', kind, n, array_to_string(plan, ' / '));
END $$;
BEGIN;
SELECT scan('seq');
SELECT scan('index');
SELECT scan('bitmap');
COMMIT;
SET enable_seqscan = off;
SELECT _id FROM bucket_row(4);
EXPLAIN (COSTS OFF) SELECT * FROM "system.buckets.w" WHERE _id = '5f5e48400000000000000004';
EXPLAIN (COSTS OFF) SELECT _id FROM "system.buckets.w" WHERE _id = '5f5e48400000000000000004';
SELECT _id, meta FROM "system.buckets.w" WHERE _id = '5f5e48400000000000000004';
RESET enable_seqscan;
-- TID and sampling scans
SELECT count(*) FROM "system.buckets.w" WHERE ctid = '(0,1)';
SELECT count(*) > 0 FROM "system.buckets.w" TABLESAMPLE SYSTEM (50) REPEATABLE (1);

-- UPDATE (the derived time columns follow), DELETE.
UPDATE "system.buckets.w" SET control = jsonb_set(control, '{min,t}', '"2000-01-01T00:00:00.000Z"')
 WHERE _id = '5f5e48400000000000000004';
SELECT min_time FROM "system.buckets.w" WHERE _id = '5f5e48400000000000000004';
DELETE FROM "system.buckets.w" WHERE meta @> '{"host": 7}';
SELECT count(*) FROM "system.buckets.w";
-- A primary key violation is a clean error.
INSERT INTO "system.buckets.w" (_id, meta, control, data) SELECT * FROM bucket_row(1);

-- COPY out and in (text and binary), through files in the data directory.
SELECT current_setting('data_directory') || '/tscoll_buckets.copy' AS copy_file,
       current_setting('data_directory') || '/tscoll_buckets.bin' AS bin_file \gset
COPY "system.buckets.w" (_id, meta, control, data) TO :'copy_file';
COPY "system.buckets.w" (_id, meta, control, data) TO :'bin_file' WITH (FORMAT binary);
TRUNCATE "system.buckets.w";
SELECT count(*) FROM "system.buckets.w";
COPY "system.buckets.w" (_id, meta, control, data) FROM :'copy_file';
SELECT count(*), sum(length(data)) FROM "system.buckets.w";
TRUNCATE "system.buckets.w";
COPY "system.buckets.w" (_id, meta, control, data) FROM :'bin_file' WITH (FORMAT binary);
SELECT count(*), sum(length(data)) FROM "system.buckets.w";

-- VACUUM, VACUUM FULL, CLUSTER keep every row and index.
DELETE FROM "system.buckets.w" WHERE meta @> '{"host": 1}';
VACUUM (ANALYZE) "system.buckets.w";
VACUUM FULL "system.buckets.w";
CLUSTER "system.buckets.w" USING w_min_time;
SELECT count(*), sum(length(data)) FROM "system.buckets.w";
SET enable_seqscan = off;
SELECT count(*) FROM "system.buckets.w" WHERE min_time >= '2020-01-01';
RESET enable_seqscan;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid = '"system.buckets.w"'::regclass;

-- Rollback of direct writes.
BEGIN;
DELETE FROM "system.buckets.w";
ROLLBACK;
SELECT count(*) FROM "system.buckets.w";
TRUNCATE "system.buckets.w";

-- A row written directly must be a valid bucket (SPEC §4.3); each refusal
-- below names what is wrong, and nothing is written.
INSERT INTO "system.buckets.w" (_id, meta, control, data) SELECT * FROM bucket_row(1);
-- data that is not tscoll bucket data: XX001 naming the bucket
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta, control, '\x00' FROM "system.buckets.w"$$);
-- a flipped byte
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta, control,
                    set_byte(data, 20, get_byte(data, 20) # 1) FROM "system.buckets.w"$$);
-- a count that disagrees with data
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta, jsonb_set(control, '{count}', '2'), data
               FROM "system.buckets.w"$$);
-- no control.version, or another one
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta, control - 'version', data FROM "system.buckets.w"$$);
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta, jsonb_set(control, '{version}', '3'), data
               FROM "system.buckets.w"$$);
-- a measurement time outside control.min/max
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control, data)
             SELECT '5f5e1e100000000000000002', meta,
                    jsonb_set(control, '{min,t}', '"2020-09-13T13:27:00.000Z"'), data
               FROM "system.buckets.w"$$);
-- null data; a direct UPDATE is checked the same way; COPY too
SELECT try($$INSERT INTO "system.buckets.w" (_id, meta, control) SELECT '5f5e1e100000000000000002', meta, control FROM "system.buckets.w"$$);
SELECT try($$UPDATE "system.buckets.w" SET data = '\x00'$$);
SELECT try($$UPDATE "system.buckets.w" SET control = jsonb_set(control, '{max,t}', '"2020-09-13T12:26:40.000Z"')$$);
COPY (SELECT '5f5e1e100000000000000002', meta, control, '\x00'::bytea FROM "system.buckets.w") TO :'copy_file';
SELECT try(format('COPY "system.buckets.w" (_id, meta, control, data) FROM %L', :'copy_file'));
SELECT _id, control->'count' AS count, length(data) FROM "system.buckets.w";

-- The catalog forgets a collection's series when its bucket table is
-- written directly: after the DELETE, the next measurement opens a new bucket.
SELECT tscoll.create_collection('direct', 't', 'm');
INSERT INTO direct (doc) VALUES ('{"t": "2024-01-01T00:00:00Z", "m": 1, "v": 1}');
SELECT (tscoll.catalog_stats()->>'numOpenBuckets')::int AS open_before \gset
DELETE FROM "system.buckets.direct";
SELECT (tscoll.catalog_stats()->>'numOpenBuckets')::int - :open_before AS open_change;
INSERT INTO direct (doc) VALUES ('{"t": "2024-01-01T00:00:01Z", "m": 1, "v": 2}');
SELECT count(*) AS buckets, sum((control->>'count')::int) AS measurements FROM "system.buckets.direct";
SELECT tscoll.collection_stats('direct')->'numBucketInserts' AS inserts;
