-- Typed fields: view columns that read one measurement field as a
-- PostgreSQL type (doc/REFERENCE.md, Typed fields). Each type with values
-- of its own type, of other types and absent; INSERT through the columns;
-- reads with and without tscoll's rewrites giving the same rows; pruning,
-- lazy unpacking and aggregation in buckets on typed columns; UPDATE and
-- DELETE; coll_mod; COPY; the view's columns guarded.
\i test/setup.psql

SELECT tscoll.create_collection('typed', 'ts', 'sensor', fields => '{
    "temp": "float8", "n": "int4", "big": "bigint", "status": "text",
    "ok": "boolean", "at": "timestamptz", "raw": "jsonb"}');
-- Columns after doc, in jsonb's key order.
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'typed'::regclass AND attnum > 0 ORDER BY attnum;
SELECT options FROM tscoll.list_collections() WHERE name = 'typed'::regclass;
SELECT tscoll.collection_stats('typed')->'fields';
-- Idempotent with the same fields, in any order or spelling; 42P07 with others.
SELECT tscoll.create_collection('typed', 'ts', 'sensor', fields => '{
    "raw": "jsonb", "n": "integer", "big": "int8", "status": "text",
    "ok": "bool", "at": "timestamp with time zone", "temp": "double precision"}');
SELECT try($$SELECT tscoll.create_collection('typed', 'ts', 'sensor', fields => '{"temp": "float8"}')$$);
SELECT try($$SELECT tscoll.create_collection('typed', 'ts', 'sensor')$$);

-- Each field with a value of its type, of another type, JSON null, and absent.
INSERT INTO typed (ts, sensor, doc) VALUES
  ('2024-01-01 00:00Z', '{"id": 1}', '{"temp": 21.5, "n": 3, "big": 12345678901, "status": "ok",
     "ok": true, "at": {"$date": "2024-01-01T10:00:00Z"}, "raw": [1, 2]}'),
  ('2024-01-01 00:01Z', '{"id": 1}', '{"temp": "hot", "n": 3.5, "big": 1e3, "status": 5,
     "ok": "yes", "at": "2024-01-01", "raw": null}'),
  ('2024-01-01 00:02Z', '{"id": 1}', '{"temp": -0.5, "n": 99999999999, "big": 3.0, "status": "",
     "ok": false, "at": {"$date": {"$numberLong": "0"}}, "raw": {"a": 1}}'),
  ('2024-01-01 00:03Z', '{"id": 1}', '{"temp": 1e400, "n": -2147483648, "big": 9223372036854775808,
     "status": null, "ok": null, "at": null}'),
  ('2024-01-01 00:04Z', '{"id": 2}', '{"other": 1}'),
  ('2024-01-01 00:05Z', '{"id": 2}', NULL);
-- Through the columns: a column's value is the field's; doc may give the
-- same value, not another; NULL leaves doc's; RETURNING shows the
-- measurement as stored.
INSERT INTO typed (ts, sensor, temp, status, at) VALUES
  ('2024-01-01 00:06Z', '{"id": 2}', 7.25, 'typed', '2024-06-01 12:00Z')
  RETURNING ts, temp, status, at, doc - '_id' AS doc;
INSERT INTO typed (ts, sensor, doc, temp, n) VALUES
  ('2024-01-01 00:07Z', '{"id": 2}', '{"temp": 2, "n": 5}', 2, NULL)
  RETURNING temp, n, doc - '_id' AS doc;
SELECT try($$INSERT INTO typed (ts, doc, temp) VALUES ('2024-01-01 00:09Z', '{"temp": 1}', 2)$$);
INSERT INTO typed (ts, raw, big, ok) VALUES ('2024-01-01 00:08Z', '{"x": [1]}', -1, true)
  RETURNING raw, big, ok, doc - '_id' AS doc;
SELECT try($$INSERT INTO typed (ts, temp) VALUES ('2024-01-01 00:09Z', 'NaN')$$);
SELECT try($$INSERT INTO typed (ts, at) VALUES ('2024-01-01 00:09Z', 'infinity')$$);
SELECT try($$INSERT INTO typed (ts, doc, temp) VALUES ('2024-01-01 00:09Z', '[1]', 1)$$);

-- Every column, with tscoll's rewrites and without: the same rows.
CREATE TEMP TABLE plain AS SELECT * FROM typed;
SET tscoll.enable_bucket_pruning = off;
SELECT ts, temp, n, big, status, ok, at, raw FROM typed ORDER BY ts;
CREATE TEMP TABLE unplanned AS SELECT * FROM typed;
RESET tscoll.enable_bucket_pruning;
SELECT count(*) AS differing FROM (
    (SELECT * FROM plain EXCEPT ALL SELECT * FROM unplanned)
    UNION ALL (SELECT * FROM unplanned EXCEPT ALL SELECT * FROM plain)) d;

-- Queries on typed columns, each against the same query with tscoll's
-- rewrites off.
CREATE FUNCTION both_ways(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    planned text;
    unplanned text;
BEGIN
    EXECUTE format('SELECT string_agg(r::text, '' | '' ORDER BY r::text) FROM (%s) r', query)
       INTO planned;
    SET LOCAL tscoll.enable_bucket_pruning = off;
    EXECUTE format('SELECT string_agg(r::text, '' | '' ORDER BY r::text) FROM (%s) r', query)
       INTO unplanned;
    SET LOCAL tscoll.enable_bucket_pruning = on;
    RETURN CASE WHEN planned IS NOT DISTINCT FROM unplanned THEN planned
                ELSE format('DIFFERENT: %s <> %s', planned, unplanned) END;
END $$;
SELECT both_ways($$SELECT ts FROM typed WHERE temp > 10$$);
SELECT both_ways($$SELECT ts FROM typed WHERE temp < 0 OR temp IS NULL$$);
SELECT both_ways($$SELECT ts, n FROM typed WHERE n = 3$$);
SELECT both_ways($$SELECT ts, big FROM typed WHERE big >= 1000$$);
SELECT both_ways($$SELECT ts FROM typed WHERE status = 'ok'$$);
SELECT both_ways($$SELECT ts FROM typed WHERE status < 'p'$$);
SELECT both_ways($$SELECT ts FROM typed WHERE ok$$);
SELECT both_ways($$SELECT ts FROM typed WHERE ok = false$$);
SELECT both_ways($$SELECT ts FROM typed WHERE at > '2024-01-01'$$);
SELECT both_ways($$SELECT ts FROM typed WHERE raw @> '{"a": 1}'$$);
SELECT both_ways($$SELECT max(temp), min(temp), sum(temp), avg(temp), count(temp), count(*) FROM typed$$);
SELECT both_ways($$SELECT sensor, max(temp), count(temp) FROM typed GROUP BY sensor$$);
SELECT both_ways($$SELECT date_trunc('minute', ts), avg(temp) FROM typed GROUP BY 1$$);
SELECT both_ways($$SELECT sum(n), sum(big), max(status), bool_and(ok), max(at) FROM typed$$);
SELECT both_ways($$SELECT max(temp), max((doc->>'temp')::float8) FROM typed WHERE sensor->>'id' = '2'$$);
SELECT both_ways($$SELECT ts, (SELECT t.temp + 1) FROM typed t$$);
SELECT both_ways($$SELECT DISTINCT ON (sensor) sensor, ts, temp FROM typed ORDER BY sensor, ts DESC$$);

-- The rewrites: pruning by the field's min/max, only the typed field
-- decoded (as its own column, 'd' for float8), aggregation in buckets.
EXPLAIN (costs off) SELECT ts, temp FROM typed WHERE temp > 10;
EXPLAIN (costs off) SELECT ts FROM typed WHERE status = 'ok' AND n = 3;
EXPLAIN (costs off) SELECT sensor, max(temp), avg(temp) FROM typed GROUP BY sensor;

-- UPDATE assigns the meta field only; DELETE by a typed column.
SELECT try($$UPDATE typed SET temp = 1$$);
SELECT try($$UPDATE typed SET sensor = '{"id": 3}' WHERE status = 'ok'$$);
DELETE FROM typed WHERE temp < 0 RETURNING ts, temp, status;
DELETE FROM typed WHERE status = 'typed' AND sensor = '{"id": 2}' RETURNING ts, temp;
SELECT count(*) FROM typed;

-- coll_mod adds fields after the others; their values are read from the
-- measurements already stored. A field keeps its type.
CREATE VIEW typed_summary AS SELECT ts, temp FROM typed;
SELECT tscoll.coll_mod('typed', '{"fields": {"other": "int8", "temp": "float8"}}')->'fields';
SELECT attname FROM pg_attribute WHERE attrelid = 'typed'::regclass AND attnum > 0 ORDER BY attnum;
SELECT ts, other FROM typed WHERE other IS NOT NULL;
SELECT try($$SELECT tscoll.coll_mod('typed', '{"fields": {"temp": "text"}}')$$);
SELECT try($$SELECT tscoll.coll_mod('typed', '{"fields": {"ts": "text"}}')$$);
SELECT try($$SELECT tscoll.coll_mod('typed', '{"fields": 1}')$$);
SELECT count(*) FROM typed_summary;
DROP VIEW typed_summary;
-- The view's columns are the collection's: no rename.
SELECT try($$ALTER VIEW typed RENAME COLUMN temp TO temperature$$);

-- COPY: the measurement columns alone take tscoll's reader; typed columns
-- in the list take PostgreSQL's path, their text read by the column type.
COPY typed (ts, sensor, doc) FROM STDIN;
2024-01-01 01:00:00+00	{"id": 4}	{"temp": 30, "status": "copied"}
\.
COPY typed (ts, sensor, temp, status) FROM STDIN WITH (FORMAT csv);
2024-01-01 01:01:00+00,"{""id"": 4}",31.5,csv
\.
SELECT ts, temp, status FROM typed WHERE sensor = '{"id": 4}' ORDER BY ts;
SELECT try($$COPY typed (ts, temp) FROM PROGRAM 'echo "2024-01-01 01:02:00+00	warm"'$$);

-- A collection without a meta field.
SELECT tscoll.create_collection('typed_nometa', 't', fields => '{"v": "int8"}');
INSERT INTO typed_nometa (t, v) VALUES ('2024-01-01Z', 5) RETURNING t, v, doc - '_id';
SELECT v, doc - '_id' FROM typed_nometa WHERE v = 5;
DELETE FROM typed_nometa WHERE v = 5;

-- A generated _id read as text: the hex doc shows; dates at the ends of the
-- range doc can show; both ways alike.
SELECT tscoll.create_collection('typed_ids', 't', fields => '{"_id": "text", "at": "timestamptz"}');
INSERT INTO typed_ids (t, doc) VALUES
  ('2024-01-01Z', '{"at": {"$date": {"$numberLong": "6311390399999999"}}}'),
  ('2024-01-01Z', '{"at": {"$date": "+200000-12-31T23:59:59.999Z"}}'),
  ('2024-01-01Z', '{"at": {"$date": "-004713-11-24T00:00:00Z"}}'),
  ('2024-01-01Z', '{"_id": "given"}');
SELECT both_ways($$SELECT count(_id), count(*) FILTER (WHERE _id = doc->>'_id') FROM typed_ids$$);
SELECT both_ways($$SELECT at FROM typed_ids$$);
SELECT both_ways($$SELECT count(*) FROM typed_ids WHERE _id = 'given'$$);
INSERT INTO typed_ids (t, _id) VALUES ('2024-01-01Z', 'as a column') RETURNING _id, doc->'_id';

-- A copy of a collection through its typed columns: doc's values that read
-- as the columns' are kept as they are (a date, a number float8 rounds).
SELECT tscoll.create_collection('typed_copy', 't', fields => '{"_id": "text", "at": "timestamptz", "x": "float8"}');
SELECT tscoll.coll_mod('typed_ids', '{"fields": {"x": "float8"}}')->'fields';
INSERT INTO typed_ids (t, doc) VALUES ('2024-01-02Z', '{"x": 2.0000000000000000000001, "at": {"$date": "2024-01-01T10:00:00Z"}}');
INSERT INTO typed_copy (t, doc, _id, at, x) SELECT t, doc, _id, at, x FROM typed_ids;
SELECT count(*) AS differing FROM (
    (SELECT t, doc FROM typed_ids EXCEPT SELECT t, doc FROM typed_copy)
    UNION ALL (SELECT t, doc FROM typed_copy EXCEPT SELECT t, doc FROM typed_ids)) d;
SELECT try($$INSERT INTO typed_copy (t, doc, at) VALUES ('2024-01-03Z', '{"at": {"$date": "2024-01-01T10:00:00Z"}}', '2024-01-01 10:00:01Z')$$);
SELECT tscoll.drop_collection('typed_copy');
SELECT tscoll.drop_collection('typed_ids');

-- Names are data, never SQL: a collection named with quotes and dollars.
SELECT tscoll.create_collection('"odd$c$''name"', 't', 'm', fields => '{"v": "int4"}');
SELECT tscoll.coll_mod('"odd$c$''name"', '{"fields": {"w": "text"}}')->'fields';
INSERT INTO "odd$c$'name" (t, m, v, w) VALUES ('2024-01-01Z', '1', 5, 'x');
SELECT v, w FROM "odd$c$'name";
SELECT tscoll.drop_collection('"odd$c$''name"');

SELECT tscoll.drop_collection('typed');
SELECT tscoll.drop_collection('typed_nometa');
