-- Hostile input (issue 9): every case gets a clear error with its SQLSTATE,
-- never a crash and never a partial write.
\i test/setup.psql

SELECT tscoll.create_collection('h', 't', 'm');
INSERT INTO h (t, m, doc) VALUES ('2024-01-01 00:00:00+00', '"s"', '{"v": 1}');

-- Malformed JSON, through the view and insert_many (which reports a bad
-- document in writeErrors, as MongoDB's insertMany does).
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '{"v": ')$$);
SELECT try($$SELECT tscoll.insert_many('h', '[{"t": "2024-01-01T00:00:00Z", "v": 1}, {"t":')$$);
SELECT try($$SELECT tscoll.insert_many('h', '{"t": "2024-01-01T00:00:00Z"}')$$);
SELECT tscoll.insert_many('h', '[1, "x", null]');
SELECT tscoll.insert_many('h', '[{"t": "2024-01-01T00:00:00Z"}, 7]');
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '[1, 2]')$$);
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '"scalar"')$$);
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '{"v": "\u0000"}')$$);

-- Deep nesting: 10,000 levels in doc, in meta, through insert_many.
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', %L)$$,
                  '{"v": ' || repeat('[', 10000) || repeat(']', 10000) || '}'));
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', %L)$$,
                  repeat('{"a": ', 10000) || '1' || repeat('}', 10000)));
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', %L, '{}')$$,
                  repeat('[', 10000) || repeat(']', 10000)));
SELECT tscoll.insert_many('h', ('[{"t": "2024-01-01T00:00:00Z", "v": '
                                 || repeat('{"a": ', 10000) || '1' || repeat('}', 10000) || '}]')::jsonb);
-- 100 levels in all (the measurement itself being the first) is allowed,
-- 101 is not.
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', %L)$$,
                  repeat('{"a": ', 100) || '1' || repeat('}', 100)));
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', %L)$$,
                  repeat('{"a": ', 101) || '1' || repeat('}', 101)));

-- Huge strings: over tscoll.max_measurement_size (4 MB), in doc, in meta,
-- as a field name.
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', jsonb_build_object('s', repeat('x', %s)))$$, 5 * 1024 * 1024));
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', to_jsonb(repeat('x', %s)), '{}')$$, 5 * 1024 * 1024));
SELECT try(format($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', jsonb_build_object(repeat('k', %s), 1))$$, 5 * 1024 * 1024));

-- A measurement of 100,000 fields is stored and read back whole.
INSERT INTO h (t, m, doc)
SELECT '2024-01-01 00:00:02', '"wide"', jsonb_object_agg('f' || i, i) FROM generate_series(1, 100000) i;
SELECT count(*) AS fields, sum(value::int) FROM h, jsonb_each_text(doc) WHERE m = '"wide"' AND key LIKE 'f%';
DELETE FROM h WHERE m = '"wide"';

-- NaN and Infinity cannot be JSON numbers; PostgreSQL's jsonb turns the
-- float and numeric ones into strings, and huge or tiny numbers are kept.
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '{"v": NaN}')$$);
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01', '"s"', '{"v": Infinity}')$$);
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('2024-01-01 00:00:01', '"n"',
              jsonb_build_object('nan', 'NaN'::float8, 'inf', '-Infinity'::float8, 'numnan', 'NaN'::numeric,
                                 'huge', 1e400, 'tiny', 1e-400, 'negzero', '-0'::numeric))$$);
SELECT t, doc - '_id' AS doc FROM h WHERE m = '"n"';
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('NaN', '"s"', '{}')$$);
SELECT try($$INSERT INTO h (t, m, doc) VALUES ('infinity', '"s"', '{}')$$);
SELECT tscoll.insert_many('h', '[{"t": {"$date": 1e400}}]');
SELECT tscoll.insert_many('h', '[{"t": {"$date": "NaN"}}]');

-- Invalid UTF-8 in COPY is refused by PostgreSQL before tscoll sees it.
SELECT try($$COPY h (t, m, doc) FROM PROGRAM 'printf ''2024-01-01\t"s"\t{"v": "\377\376"}\n'''$$);
SELECT try($$COPY h (t, m, doc) FROM PROGRAM 'printf ''2024-01-01\t"\300"\t{}\n'''$$);

-- Invalid ObjectId text.
SELECT try($$SELECT 'xyz'::tscoll.objectid$$);
SELECT try($$SELECT '0123456789abcdef0123456'::tscoll.objectid$$);
SELECT try($$SELECT '0123456789abcdef012345678'::tscoll.objectid$$);
SELECT try($$SELECT '0123456789abcdef0123456g'::tscoll.objectid$$);
SELECT try($$SELECT ' 0123456789abcdef0123456'::tscoll.objectid$$);
SELECT try($$SELECT ''::tscoll.objectid$$);
SELECT '0123456789ABCDEF01234567'::tscoll.objectid;
-- Binary input (COPY ... FORMAT binary) of 2 bytes instead of 12.
CREATE TABLE ids (id tscoll.objectid);
SELECT try($$COPY ids FROM PROGRAM 'printf ''PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000\000\001\000\000\000\002\001\002\377\377''' (FORMAT binary)$$);
SELECT try($$COPY ids FROM PROGRAM 'printf ''PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000\000\001\000\000\000\014abcdefghijkl\377\377''' (FORMAT binary)$$);
SELECT id FROM ids;

-- Absurd settings are refused by SET.
SELECT try($$SET tscoll.bucket_max_count = 0$$);
SELECT try($$SET tscoll.bucket_max_count = 1e12$$);
SELECT try($$SET tscoll.bucket_max_count = 'many'$$);
SELECT try($$SET tscoll.bucket_max_size = '-1'$$);
SELECT try($$SET tscoll.bucket_max_size = '1TB'$$);
SELECT try($$SET tscoll.bucket_min_count = 1001$$);
SELECT try($$SET tscoll.max_measurement_size = '17MB'$$);
SELECT try($$SET tscoll.catalog_memory_limit = '1GB'$$);
SELECT try($$SET tscoll.ttl_monitor_sleep_secs = 0$$);
SELECT try($$SET tscoll.ttl_batch_size = 2000000$$);
SELECT try($$SET tscoll.ttl_monitor_enabled = 'maybe'$$);

-- Corrupted data. Written directly into the bucket table, it is refused.
-- (The _ids are given: a generated id's counter would vary the size.)
INSERT INTO h (t, m, doc)
SELECT timestamptz '2024-02-01' + i * interval '1 min', '"c"',
       jsonb_build_object('_id', i, 'i', i, 's', 'str' || i, 'f', i / 3.0, 'o', jsonb_build_object('a', i), 'l', jsonb_build_array(i, 'x'))
  FROM generate_series(1, 20) i;
CREATE TABLE good AS SELECT _id, meta, data FROM "system.buckets.h" WHERE meta = '"c"';
SELECT length(data) FROM good;
SELECT try($$INSERT INTO "system.buckets.h" (_id, meta, control, data)
             SELECT '65bae0000000000000000001', meta, control, '\xdeadbeef' FROM "system.buckets.h" WHERE meta = '"c"'$$);
SELECT try($$UPDATE "system.buckets.h" SET data = substr(data, 1, length(data) - 1) WHERE meta = '"c"'$$);
SELECT try($$UPDATE "system.buckets.h" SET data = overlay(data PLACING '\xff' FROM 3) WHERE meta = '"c"'$$);
-- The decoder meets every corruption of one byte, and every truncation, of
-- a real bucket's data: each raises XX001 (data_corrupted) or decodes to
-- something else; nothing crashes.
CREATE FUNCTION decode_outcome(damaged bytea) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM count(*) FROM good g, tscoll._unpack(g._id, g.meta, damaged, 't', 'm');
    PERFORM tscoll._data_json(_id, damaged, 't') FROM good;
    RETURN 'decoded';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT kind, outcome, count(*)
  FROM good g,
       LATERAL (SELECT 'flipped byte' AS kind, decode_outcome(set_byte(g.data, i, get_byte(g.data, i) # x)) AS outcome
                  FROM generate_series(0, length(g.data) - 1) i, unnest(ARRAY[1, 128, 255]) x
                UNION ALL
                SELECT 'truncated', decode_outcome(substr(g.data, 1, n))
                  FROM generate_series(0, length(g.data) - 1) n) o
 GROUP BY 1, 2 ORDER BY 1, 2;
-- The stored bucket is intact.
SELECT count(*), sum((doc->>'i')::int) FROM h WHERE m = '"c"';

-- Only the valid measurements above were written: the first one, the
-- valid document of insert_many (no meta), the 100-level one and the "n"
-- one; every refused statement left nothing.
SELECT m, count(*) FROM h WHERE m IS DISTINCT FROM '"c"' GROUP BY m ORDER BY m;
SELECT meta, count(*) FROM "system.buckets.h" WHERE meta IS DISTINCT FROM '"c"' GROUP BY meta ORDER BY meta;
