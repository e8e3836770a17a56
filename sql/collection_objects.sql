-- What a collection is made of (SPEC §2.2): catalog row, bucket table,
-- view, default index; list_collections; buckets().
\i test/setup.psql

SELECT tscoll.create_collection('weather', 'timestamp', 'sensor');
SELECT tscoll.create_collection('nometa', 'ts', granularity => 'minutes', expire_after_seconds => 3600);
SELECT tscoll.create_collection('fixed', 'ts', 'm', bucket_max_span_seconds => 120, bucket_rounding_seconds => 120);

-- The catalog: regclass columns, rounding always filled in, granularity NULL
-- for fixed bucketing.
SELECT view, bucket_table, time_field, meta_field, granularity, bucket_max_span_seconds,
       bucket_rounding_seconds, expire_after_seconds, bucketing_changed
  FROM tscoll.collections ORDER BY view::text;
SELECT attname, atttypid::regtype FROM pg_attribute
 WHERE attrelid = 'tscoll.collections'::regclass AND attnum > 0 ORDER BY attnum;
-- registered for pg_dump
SELECT extconfig::regclass[] FROM pg_extension WHERE extname = 'tscoll';

-- The bucket table: columns in order, types, access method, owner.
SELECT attnum, attname, atttypid::regtype, attnotnull, attgenerated
  FROM pg_attribute WHERE attrelid = '"system.buckets.weather"'::regclass AND attnum > 0
 ORDER BY attnum;
SELECT c.relname, a.amname, pg_get_userbyid(c.relowner) = current_user AS owned
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid IN ('"system.buckets.weather"'::regclass, '"system.buckets.nometa"'::regclass)
 ORDER BY 1;
-- Indexes: the primary key on _id, and MongoDB's default meta/time index
-- when there is a metaField.
SELECT indexrelid::regclass, indisprimary, pg_get_indexdef(indexrelid)
  FROM pg_index WHERE indrelid IN ('"system.buckets.weather"'::regclass,
                                   '"system.buckets.nometa"'::regclass,
                                   '"system.buckets.fixed"'::regclass)
 ORDER BY indrelid::regclass::text, indexrelid::regclass::text;

-- The views: time field, meta field (when there is one), doc.
SELECT attrelid::regclass, attnum, attname, atttypid::regtype
  FROM pg_attribute WHERE attrelid IN ('weather'::regclass, 'nometa'::regclass) AND attnum > 0
 ORDER BY attrelid::regclass::text, attnum;
SELECT relkind FROM pg_class WHERE oid = 'weather'::regclass;
SELECT * FROM weather;
SELECT * FROM nometa;

-- The derived time columns follow control, also when it is written directly.
INSERT INTO fixed (ts, m, doc) VALUES ('2020-09-13 12:26:40+00', '"m1"', '{}');
UPDATE "system.buckets.fixed" SET control = jsonb_set(control, '{max,ts}', '"2020-09-13T12:27:59.999999Z"');
SET TimeZone = 'America/New_York';
SELECT tscoll.objectid_time(_id), control->'min'->'ts' AS min_ts, control->'max'->'ts' AS max_ts,
       min_time, max_time FROM "system.buckets.fixed";
RESET TimeZone;
-- A row whose control lacks a valid date is refused.
INSERT INTO "system.buckets.fixed" (_id, control, data)
VALUES ('5f5e10000000000000000001', '{"min": {"ts": "2020-09-13 12:26:00"}, "max": {"ts": "2020-09-13T12:26:00.000Z"}}', '\x00');
INSERT INTO "system.buckets.fixed" (_id, control, data)
VALUES ('5f5e10000000000000000001', '{"min": {}, "max": {}}', '\x00');
-- Data damaged on disk is refused when read (XX001, naming the bucket),
-- never misread. tscoll_buckets refuses to write such a row, so the test
-- writes it with the table under heap for a moment.
ALTER TABLE "system.buckets.fixed" SET ACCESS METHOD heap;
UPDATE "system.buckets.fixed" SET data = '\x00';
SELECT try($$SELECT * FROM fixed$$);
SELECT try($$SELECT * FROM tscoll.buckets('fixed')$$);
DELETE FROM "system.buckets.fixed";
ALTER TABLE "system.buckets.fixed" SET ACCESS METHOD tscoll_buckets;

-- list_collections in MongoDB's stored-options shape.
SELECT name, bucket_table, options FROM tscoll.list_collections();

-- buckets(): empty until inserts exist; only for collections.
SELECT * FROM tscoll.buckets('weather');
SELECT * FROM tscoll.buckets('tscoll.collections');

-- A collection in another schema has its bucket table and index there.
CREATE SCHEMA s;
SELECT tscoll.create_collection('s.weather', 'timestamp', 'sensor');
SELECT c.oid::regclass, c.relkind FROM pg_class c
 WHERE c.relnamespace = 's'::regnamespace ORDER BY c.oid::regclass::text COLLATE "C";
-- In one schema the default index name is taken, so it gets a generated one.
SELECT tscoll.create_collection('weather2', 'timestamp', 'sensor');
SELECT indexrelid::regclass FROM pg_index
 WHERE indrelid = '"system.buckets.weather2"'::regclass AND NOT indisprimary;
DROP SCHEMA s CASCADE;
