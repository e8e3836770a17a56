-- tscoll.create_collection / create_collection_from_options: every row of
-- SPEC §2.1's validation table, with its SQLSTATE; idempotence; nothing
-- left behind after a failure.
\i test/setup.psql

CREATE FUNCTION opts(options jsonb) RETURNS text LANGUAGE sql AS $$
    SELECT try(format('SELECT tscoll.create_collection_from_options(%L, %L)', 'c', options)) $$;
-- Relations and catalog rows, to show that failures leave nothing behind.
CREATE FUNCTION footprint() RETURNS text LANGUAGE sql AS $$
    SELECT format('%s relations, %s collections',
                  (SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace),
                  (SELECT count(*) FROM tscoll.collections)) $$;
SELECT footprint();

-- 1. time field missing or empty: 22023
SELECT try($$SELECT tscoll.create_collection('c', NULL)$$);
SELECT try($$SELECT tscoll.create_collection('c', '')$$);
SELECT opts('{}');
SELECT opts('{"timeseries": {}}');
SELECT opts('{"timeseries": {"metaField": "m"}}');
SELECT opts('{"timeseries": {"timeField": ""}}');
SELECT opts('{"expireAfterSeconds": 10}');

-- 2. a field name that is not a JSON string (options form): 42804
SELECT opts('{"timeseries": {"timeField": 1}}');
SELECT opts('{"timeseries": {"timeField": true}}');
SELECT opts('{"timeseries": {"timeField": {"a": 1}}}');
SELECT opts('{"timeseries": {"timeField": ["t"]}}');
SELECT opts('{"timeseries": {"timeField": null}}');
SELECT opts('{"timeseries": {"timeField": "t", "metaField": 5}}');
SELECT opts('{"timeseries": {"timeField": "t", "metaField": null}}');
-- other options of the wrong type are type mismatches too
SELECT opts('{"timeseries": "t"}');
SELECT opts('{"timeseries": {"timeField": "t", "granularity": 1}}');
SELECT opts('{"timeseries": {"timeField": "t", "bucketMaxSpanSeconds": "60", "bucketRoundingSeconds": 60}}');
SELECT opts('[1]');

-- 3. unknown option inside timeseries or at the top level: 22023
SELECT opts('{"timeseries": {"timeField": "t", "foo": 1}}');
SELECT opts('{"timeseries": {"timeField": "t", "timefield": "u"}}');
SELECT opts('{"timeseries": {"timeField": "t"}, "capped": true}');

-- 4. '.', a NUL byte, or a leading '$' in a field name: 22023
SELECT try($$SELECT tscoll.create_collection('c', 'a.b')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', 'm.x')$$);
SELECT try($$SELECT tscoll.create_collection('c', '$t')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', '$m')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', '')$$);
SELECT opts('{"timeseries": {"timeField": "a.b"}}');
-- Neither SQL text nor jsonb can hold a NUL byte, so it never reaches tscoll
-- (the core rule is unit-tested).
SELECT try($$SELECT tscoll.create_collection_from_options('c', '{"timeseries": {"timeField": "a\u0000b"}}')$$);
-- '$' inside a name, and other punctuation, are fine
SELECT try($$SELECT tscoll.create_collection('c_dollar', 't$', 'm-1')$$);

-- 5. metaField equal to timeField or to _id: 22023
SELECT try($$SELECT tscoll.create_collection('c', 't', 't')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', '_id')$$);
SELECT opts('{"timeseries": {"timeField": "t", "metaField": "t"}}');

-- 6. time or meta field named doc: 22023
SELECT try($$SELECT tscoll.create_collection('c', 'doc')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', 'doc')$$);

-- 7. only one of span/rounding, or span != rounding: 22023
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_max_span_seconds => 100)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_rounding_seconds => 100)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_max_span_seconds => 100, bucket_rounding_seconds => 50)$$);
SELECT opts('{"timeseries": {"timeField": "t", "bucketMaxSpanSeconds": 100}}');

-- 8. span/rounding outside 1 .. 31536000: 22023
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_max_span_seconds => 0, bucket_rounding_seconds => 0)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_max_span_seconds => -5, bucket_rounding_seconds => -5)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', bucket_max_span_seconds => 31536001, bucket_rounding_seconds => 31536001)$$);
SELECT opts('{"timeseries": {"timeField": "t", "bucketMaxSpanSeconds": 1e12, "bucketRoundingSeconds": 1e12}}');
-- not an integer: 22023
SELECT opts('{"timeseries": {"timeField": "t", "bucketMaxSpanSeconds": 60.5, "bucketRoundingSeconds": 60.5}}');
-- the bounds themselves are valid; 60.0 and 6e1 are the integer 60
SELECT try($$SELECT tscoll.create_collection('c_span_1', 't', bucket_max_span_seconds => 1, bucket_rounding_seconds => 1)$$);
SELECT try($$SELECT tscoll.create_collection('c_span_max', 't', bucket_max_span_seconds => 31536000, bucket_rounding_seconds => 31536000)$$);
SELECT try($$SELECT tscoll.create_collection_from_options('c_span_60', '{"timeseries": {"timeField": "t", "bucketMaxSpanSeconds": 60.0, "bucketRoundingSeconds": 6e1}}')$$);

-- 9. an unknown granularity: 22023 (names are case-sensitive)
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => 'days')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => 'Seconds')$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => '')$$);

-- 10. granularity with rounding, or with a span other than its default: 22023
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => 'seconds', bucket_rounding_seconds => 60)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => 'hours', bucket_max_span_seconds => 3600, bucket_rounding_seconds => 3600)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', granularity => 'minutes', bucket_max_span_seconds => 3600)$$);
-- with its own default span it is accepted
SELECT try($$SELECT tscoll.create_collection('c_gran_span', 't', granularity => 'minutes', bucket_max_span_seconds => 86400)$$);

-- 11. expire_after_seconds < 0 or >= 2^62: 22023
SELECT try($$SELECT tscoll.create_collection('c', 't', expire_after_seconds => -1)$$);
SELECT try($$SELECT tscoll.create_collection('c', 't', expire_after_seconds => 4611686018427387904)$$);
SELECT opts('{"timeseries": {"timeField": "t"}, "expireAfterSeconds": 1e30}');
SELECT try($$SELECT tscoll.create_collection('c_expire_0', 't', expire_after_seconds => 0)$$);
SELECT try($$SELECT tscoll.create_collection('c_expire_max', 't', expire_after_seconds => 4611686018427387903)$$);

-- 12. expireAfterSeconds that is not a number (options form): 42804
SELECT opts('{"timeseries": {"timeField": "t"}, "expireAfterSeconds": "100"}');
SELECT opts('{"timeseries": {"timeField": "t"}, "expireAfterSeconds": {"a": 1}}');
SELECT opts('{"timeseries": {"timeField": "t"}, "expireAfterSeconds": null}');

-- Every failure above left nothing behind.
SELECT footprint();
SELECT name FROM tscoll.list_collections();

-- 13. a relation with that name that is not a collection: 42P07
CREATE TABLE plain_table (t timestamptz);
CREATE VIEW plain_view AS SELECT 1 AS x;
CREATE SEQUENCE plain_seq;
SELECT try($$SELECT tscoll.create_collection('plain_table', 't')$$);
SELECT try($$SELECT tscoll.create_collection('plain_view', 't')$$);
SELECT try($$SELECT tscoll.create_collection('plain_seq', 't')$$);
-- ... also when only the bucket table's name is taken
CREATE TABLE "system.buckets.taken" (x int);
SELECT try($$SELECT tscoll.create_collection('taken', 't')$$);
DROP TABLE plain_table, "system.buckets.taken";
DROP VIEW plain_view;
DROP SEQUENCE plain_seq;

-- 14./15. the collection exists: same options return it, others are 42P07
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor', 'hours', expire_after_seconds => 86400);
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor', 'hours', expire_after_seconds => 86400);
SELECT tscoll.create_collection_from_options('weather',
    '{"timeseries": {"timeField": "timestamp", "metaField": "sensor", "granularity": "hours"}, "expireAfterSeconds": 86400}');
-- the default span of a granularity is the same option as no span
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor', 'hours', bucket_max_span_seconds => 2592000, expire_after_seconds => 86400);
SELECT try($$SELECT tscoll.create_collection('weather', 'timestamp', 'sensor', 'hours')$$);
SELECT try($$SELECT tscoll.create_collection('weather', 'timestamp', 'sensor', 'minutes', expire_after_seconds => 86400)$$);
SELECT try($$SELECT tscoll.create_collection('weather', 'timestamp', expire_after_seconds => 86400, granularity => 'hours')$$);
SELECT try($$SELECT tscoll.create_collection('weather', 'ts', 'sensor', 'hours', expire_after_seconds => 86400)$$);
-- no granularity means seconds: these two are the same collection
SELECT tscoll.create_collection('plain_defaults', 't');
SELECT tscoll.create_collection('plain_defaults', 't', granularity => 'seconds');
SELECT try($$SELECT tscoll.create_collection('plain_defaults', 't', bucket_max_span_seconds => 60, bucket_rounding_seconds => 60)$$);

-- 16. names whose bucket table name would exceed 63 bytes: 42622
SELECT length('system.buckets.');
SELECT try(format('SELECT tscoll.create_collection(%L, %L)', repeat('n', 49), 't'));
SELECT try(format('SELECT tscoll.create_collection(%L, %L)', repeat('é', 25), 't'));
SELECT tscoll.create_collection(repeat('n', 48), 't');
SELECT octet_length(bucket_table::text) - 2 AS bucket_name_bytes FROM tscoll.collections
 WHERE view = ('"' || repeat('n', 48) || '"')::regclass;

-- Names: schema-qualified, quoted, case-folded like SQL identifiers.
CREATE SCHEMA metrics;
SELECT tscoll.create_collection('metrics.cpu', 't', 'host');
SELECT tscoll.create_collection('"Mixed Case"', 't');
SELECT tscoll.create_collection('UPPER', 't');
SELECT try($$SELECT tscoll.create_collection('no_such_schema.c', 't')$$);
SELECT try($$SELECT tscoll.create_collection('a.b.c', 't')$$);

-- A failure after some objects were created rolls all of them back: a
-- domain named like the view makes CREATE VIEW fail after CREATE TABLE and
-- CREATE INDEX succeeded.
CREATE DOMAIN clash AS int;
SELECT footprint();
SELECT try($$SELECT tscoll.create_collection('clash', 't', 'm')$$);
SELECT footprint();
SELECT to_regclass('"system.buckets.clash"');
DROP DOMAIN clash;
DROP SCHEMA metrics CASCADE;

-- The first failing rule of SPEC §2.1's table raises: an unknown key (22023)
-- before a non-numeric expireAfterSeconds (42804).
SELECT try($$SELECT tscoll.create_collection_from_options('o',
    '{"timeseries": {"timeField": "t", "foo": 1}, "expireAfterSeconds": "x"}')$$);
SELECT try($$SELECT tscoll.create_collection_from_options('o',
    '{"timeseries": {"timeField": "t"}, "bar": 1, "expireAfterSeconds": "x"}')$$);
-- Every measurement has an _id of its own: it cannot be the time field.
SELECT try($$SELECT tscoll.create_collection('o', '_id', 'm')$$);
-- Field names become view columns: at most 63 bytes.
SELECT try(format($$SELECT tscoll.create_collection('o', '%s')$$, repeat('t', 64)));
SELECT try(format($$SELECT tscoll.create_collection('o', 't', '%s')$$, repeat('m', 64)));
SELECT tscoll.create_collection('o', repeat('t', 63), repeat('m', 63)) IS NOT NULL AS created;
SELECT tscoll.drop_collection('o');
-- A function given a relation that is not a collection: 42P01.
CREATE TABLE not_a_collection (x int);
SELECT try($$SELECT tscoll.insert_many('not_a_collection', '[]')$$);
SELECT try($$SELECT tscoll.collection_stats('not_a_collection')$$);
DROP TABLE not_a_collection;

-- typed fields (sql/typed_fields.sql has the rest): their errors in the
-- same table's terms, nothing left behind
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"temp": "float4"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"temp": 8}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '["temp"]')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"t": "text"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', 'm', fields => '{"m": "text"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"doc": "text"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"a.b": "text"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 't', fields => '{"$a": "text"}')$$);
SELECT opts('{"timeseries": {"timeField": "t"}, "fields": {"x": "jsonb"}}');
SELECT opts('{"timeseries": {"timeField": "t"}, "fields": {"x": "json"}}');
SELECT tscoll.drop_collection('c');
SELECT footprint();

SELECT name, bucket_table FROM tscoll.list_collections();
-- Never in the extension's own schema (a role named tscoll would otherwise
-- put collections there through "$user" in search_path).
SELECT try($$SELECT tscoll.create_collection('tscoll.c', 't')$$);
SET search_path = tscoll, public;
SELECT try($$SELECT tscoll.create_collection('c', 't')$$);
RESET search_path;
