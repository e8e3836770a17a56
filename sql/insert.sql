-- The insert path, the values and the bucketing rules (SPEC §3, §4).
\i test/setup.psql
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

-- What every bucket of a collection holds: count, bounds, ordered by start.
CREATE FUNCTION bucket_summary(c regclass) RETURNS TABLE (n int, min_t text, max_t text)
    LANGUAGE sql AS $$
    SELECT (control->>'count')::int, control->'min'->>(SELECT time_field FROM tscoll.collections WHERE view = c),
           control->'max'->>(SELECT time_field FROM tscoll.collections WHERE view = c)
      FROM tscoll.buckets(c) ORDER BY 2, 3, 1 $$;
-- The catalog counters that are not zero.
CREATE FUNCTION counters(c regclass) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_object_agg(key, value) FROM jsonb_each(tscoll.collection_stats(c))
     WHERE key LIKE 'num%' AND value <> '0' $$;

------------------------------------------------------------------------------
-- Writes through the view: doc form, column form, conflicts.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('weather', 'timestamp', 'sensor');
INSERT INTO weather (doc) VALUES ('{"timestamp": "2021-05-18T00:00:00Z",
    "sensor": {"sensorId": 5578, "type": "temperature"}, "temp": 12}');
INSERT INTO weather ("timestamp", sensor, doc)
    VALUES ('2021-05-18T00:01:00Z', '{"sensorId": 5578, "type": "temperature"}', '{"temp": 13}');
-- The same value in the column and the doc is fine; doc may be omitted.
INSERT INTO weather ("timestamp", sensor, doc) VALUES ('2021-05-18T00:02:00Z',
    '{"type": "temperature", "sensorId": 5578}',
    '{"timestamp": "2021-05-18T02:02:00+02:00", "sensor": {"sensorId": 5578, "type": "temperature"}}');
INSERT INTO weather ("timestamp", sensor) VALUES ('2021-05-18T00:03:00Z', '{"sensorId": 5578, "type": "temperature"}');
-- Different values: 22023, nothing written.
SELECT try($$INSERT INTO weather ("timestamp", doc) VALUES ('2021-05-18T00:04:00Z', '{"timestamp": "2021-05-18T00:05:00Z"}')$$);
SELECT try($$INSERT INTO weather (sensor, doc) VALUES ('1', '{"timestamp": "2021-05-18T00:05:00Z", "sensor": 2}')$$);
SELECT try($$INSERT INTO weather (doc) VALUES ('[1, 2]')$$);
SELECT try($$INSERT INTO weather (doc) VALUES ('"text"')$$);
-- One series, one bucket, four measurements; _id generated as 24 hex digits.
SELECT "timestamp", sensor, doc - '_id' AS doc, doc->>'_id' ~ '^[0-9a-f]{24}$' AS id_generated
  FROM weather ORDER BY 1;
SELECT n, min_t, max_t FROM bucket_summary('weather');
SELECT meta, control - 'min' - 'max' AS control,
       tscoll.objectid_time(_id) = (control->'min'->>'timestamp')::timestamptz AS id_time_is_min
  FROM tscoll.buckets('weather');

------------------------------------------------------------------------------
-- The collStats sequence (counters reach the collection at commit).
------------------------------------------------------------------------------
SELECT tscoll.create_collection('stats', 't', 'm');
SELECT counters('stats');
-- The catalog is shared by every session (and earlier tests): compare.
SELECT tscoll.catalog_stats() AS catalog_before \gset
INSERT INTO stats (t, m, doc) VALUES ('2021-05-18 00:00:00+00', '"a"', '{"v": 1}');
SELECT counters('stats');
INSERT INTO stats (t, m, doc) VALUES ('2021-05-18 00:00:01+00', '"a"', '{"v": 2}'),
                                     ('2021-05-18 00:00:01+00', '"b"', '{"v": 3}');
SELECT counters('stats');
INSERT INTO stats (t, m, doc) VALUES ('2021-05-18 02:00:00+00', '"a"', '{"v": 4}'),
                                     ('2021-05-18 00:30:00+00', '"b"', '{"v": "five"}');
SELECT counters('stats');
SELECT key, CASE WHEN key IN ('totalSize', 'avgBucketSize') THEN 'size' ELSE value::text END AS value
  FROM jsonb_each(tscoll.collection_stats('stats')) ORDER BY key;
-- Two series, each with one open bucket: "a" closed its first by time-forward,
-- "b" by schema change.
SELECT key, value::int - (:'catalog_before'::jsonb->>key)::int AS change
  FROM jsonb_each_text(tscoll.catalog_stats()) ORDER BY key;
-- Dropping a collection forgets its open buckets.
SELECT tscoll.drop_collection('stats');
SELECT (tscoll.catalog_stats()->>'numOpenBuckets')::int - (:'catalog_before'::jsonb->>'numOpenBuckets')::int
    AS open_change;
SELECT try($$SELECT tscoll._forget_bucket_table('weather'::regclass)$$);

------------------------------------------------------------------------------
-- Time values (SPEC §3): accepted forms, microseconds, 22007 for the rest.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('times', 't');
INSERT INTO times (doc) VALUES
    ('{"t": "2021-05-18T00:00:00Z", "form": "Z"}'),
    ('{"t": "2021-05-18T02:00:00.5+02:00", "form": "offset"}'),
    ('{"t": "2021-05-18T00:00:01", "form": "no offset is UTC"}'),
    ('{"t": {"$date": "2021-05-18T00:00:02.123Z"}, "form": "$date"}'),
    ('{"t": {"$date": {"$numberLong": "1621296003000"}}, "form": "$numberLong"}'),
    ('{"t": "2021-05-18T00:00:04.123456Z", "form": "micros"}');
INSERT INTO times (t, doc) VALUES ('2021-05-18 00:00:05.000001+00', '{"form": "column"}');
SET TimeZone = 'America/New_York';
SET DateStyle = 'SQL, DMY';
SELECT doc->>'form' AS form, doc->>'t' AS t FROM times ORDER BY t;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';
SELECT try(format($$INSERT INTO times (doc) VALUES (%L)$$, d))
  FROM unnest(ARRAY['{"form": "missing"}', '{"t": "now"}', '{"t": "epoch"}', '{"t": "infinity"}',
                    '{"t": "2021-05-18 00:00:00 PST"}', '{"t": 1621296000}', '{"t": null}',
                    '{"t": "May 18 2021"}', '{"t": {"$date": "yesterday"}}']) AS d;
SELECT try($$INSERT INTO times (t, doc) VALUES ('infinity', '{}')$$);
-- One bad row fails the whole statement.
SELECT try($$INSERT INTO times (doc) VALUES ('{"t": "2021-05-18T00:00:09Z"}'), ('{"t": "bad"}')$$);
SELECT count(*) FROM times;

------------------------------------------------------------------------------
-- Round trip (SPEC §3): doc comes back jsonb-equal, dates canonical.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('trip', 't', 'm');
CREATE TABLE originals (k int, doc jsonb);
INSERT INTO originals VALUES
    (1, '{"t": "2021-05-18T00:00:00.000Z", "k": 1, "n": [12, 12.5, 1e-7, 123456789012345678901234567890, -0.000001, 2.5e20]}'),
    (2, '{"t": "2021-05-18T00:00:01.000Z", "k": 2, "m": {"b": 1, "a": [true, false, null]}, "s": "ünïcödé ✓ 時系列 \"q\" \\ \n"}'),
    (3, '{"t": "2021-05-18T00:00:02.000Z", "k": 3, "_id": 42, "d": {"$date": "2021-01-01T00:00:00Z"}, "e": {}, "f": []}'),
    (4, (SELECT format('{"t": "2021-05-18T00:00:03.000Z", "k": 4, "deep": %s1%s}', repeat('[', 99), repeat(']', 99))::jsonb));
INSERT INTO trip (doc) SELECT doc FROM originals ORDER BY k;
-- Equal but for _id (generated where missing) and dates (canonical text).
SELECT o.k, (t.doc - '_id' - 'd') = (o.doc - '_id' - 'd') AS equal,
       t.doc->>'_id' ~ '^[0-9a-f]{24}$' AS id_generated, t.doc->'_id' = '42' AS id_kept
  FROM trip t JOIN originals o ON (t.doc->>'k')::int = o.k ORDER BY o.k;
SELECT doc->'d' AS date_value, doc->'n' AS numbers FROM trip WHERE doc ? 'd' OR doc ? 'n' ORDER BY 1;
-- Deeper than 100 levels, or larger than tscoll.max_measurement_size: 54000.
SELECT try(format($$INSERT INTO trip (doc) VALUES ('{"t": "2021-05-18T00:00:00Z", "deep": %s1%s}')$$,
                  repeat('[', 100), repeat(']', 100)));
SET tscoll.max_measurement_size = '1kB';
SELECT try(format($$INSERT INTO trip (doc) VALUES ('{"t": "2021-05-18T00:00:00Z", "s": "%s"}')$$, repeat('x', 1100)));
RESET tscoll.max_measurement_size;
SELECT try($$SET tscoll.bucket_max_count = 0$$);
SELECT try($$SET tscoll.bucket_max_size = '100MB'$$);

------------------------------------------------------------------------------
-- Series (SPEC §4.1): meta equality after sorting keys; null != missing.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('series', 't', 'm');
INSERT INTO series (doc) VALUES
    ('{"t": "2021-05-18T00:00:00Z", "m": {"a": 1, "b": 2}}'),
    ('{"t": "2021-05-18T00:00:01Z", "m": {"b": 2, "a": 1.0}}'),
    ('{"t": "2021-05-18T00:00:02Z", "m": [1, 2]}'),
    ('{"t": "2021-05-18T00:00:03Z", "m": [2, 1]}'),
    ('{"t": "2021-05-18T00:00:04Z", "m": null}'),
    ('{"t": "2021-05-18T00:00:05Z"}');
INSERT INTO series (t, m) VALUES ('2021-05-18T00:00:06Z', 'null'), ('2021-05-18T00:00:07Z', NULL);
SELECT meta, control->'count' AS count FROM tscoll.buckets('series') ORDER BY control->'min'->>'t';
SELECT t, m, m IS NULL AS absent, doc ? 'm' AS in_doc FROM series WHERE t >= '2021-05-18T00:00:04Z' ORDER BY t;

------------------------------------------------------------------------------
-- 1100 measurements one second apart: 1000 + 100, however they are batched.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('one_per_statement', 't');
SELECT tscoll.create_collection('half_per_statement', 't');
SELECT tscoll.create_collection('one_copy', 't');
CREATE TABLE seconds AS
    SELECT i, format('{"t": "%s", "i": %s}',
                     to_char((timestamptz '2021-05-18 00:00:00+00' + i * interval '1 second') AT TIME ZONE 'UTC',
                             'YYYY-MM-DD"T"HH24:MI:SS"Z"'), i)::jsonb AS doc
      FROM generate_series(0, 1099) i;
DO $$ BEGIN
    FOR k IN 0..1099 LOOP
        INSERT INTO one_per_statement (doc) SELECT doc FROM seconds WHERE i = k;
    END LOOP;
END $$;
INSERT INTO half_per_statement (doc) SELECT doc FROM seconds WHERE i < 550 ORDER BY i;
INSERT INTO half_per_statement (doc) SELECT doc FROM seconds WHERE i >= 550 ORDER BY i;
SELECT current_setting('data_directory') || '/tscoll_insert.copy' AS copy_file \gset
COPY (SELECT doc FROM seconds ORDER BY i) TO :'copy_file';
COPY one_copy (doc) FROM :'copy_file';
SELECT c, b.* FROM unnest(ARRAY['one_per_statement', 'half_per_statement', 'one_copy']::regclass[]) c,
       LATERAL bucket_summary(c) b ORDER BY 1, 3;
SELECT c, counters(c) FROM unnest(ARRAY['one_per_statement', 'half_per_statement', 'one_copy']::regclass[]) c;
-- Every measurement exactly once.
SELECT count(*), count(DISTINCT doc->>'i'), min((doc->>'i')::int), max((doc->>'i')::int) FROM one_copy;

------------------------------------------------------------------------------
-- Out of order, and with a schema change: a bucket this statement closed
-- (time forward, schema) is reopened as if an earlier statement had
-- written it, so the buckets are the same however the rows are batched.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('late_one', 't', 'm');
SELECT tscoll.create_collection('late_many', 't', 'm');
CREATE TABLE late_rows AS
    SELECT k, t::timestamptz, '1'::jsonb AS m, doc::jsonb
      FROM (VALUES (1, '2021-05-18 00:00Z', '{"v": 1}'), (2, '2021-05-18 02:00Z', '{"v": 2}'),
                   (3, '2021-05-18 00:30Z', '{"v": 3}'), (4, '2021-05-18 02:10Z', '{"v": 4}'),
                   (5, '2021-05-18 00:40Z', '{"v": "five"}'), (6, '2021-05-18 00:50Z', '{"v": 6}'))
           AS r(k, t, doc);
INSERT INTO late_one (t, m, doc) SELECT t, m, doc FROM late_rows ORDER BY k;
DO $$ BEGIN
    FOR i IN 1..6 LOOP
        INSERT INTO late_many (t, m, doc) SELECT t, m, doc FROM late_rows WHERE k = i;
    END LOOP;
END $$;
-- {00:00, 00:30, 00:50} {00:40 "five"} {02:00, 02:10}, both ways
SELECT c, b.* FROM unnest(ARRAY['late_one', 'late_many']::regclass[]) c,
       LATERAL bucket_summary(c) b ORDER BY 1, 3;
-- A bucket that rule 4's exception let grow past bucket_max_size (two
-- 100 kB measurements) is never reopened, though it has room by count.
SELECT tscoll.create_collection('large_reopen', 't', 'm');
INSERT INTO large_reopen (t, m, doc)
    SELECT timestamptz '2021-05-18 00:00Z' + k * interval '1 minute', '1',
           jsonb_build_object('x', x, 'pad', repeat('p', pad))
      FROM (VALUES (0, '1'::jsonb, 100000), (1, '2', 100000), (2, '"three"', 10), (3, '4', 10))
           AS r(k, x, pad) ORDER BY k;
SELECT (control->>'count')::int AS n, control->'min'->>'x' AS min_x, control->'max'->>'x' AS max_x
  FROM tscoll.buckets('large_reopen') ORDER BY control->'min'->>'t', n DESC;

-- A bucket closed by size is full and never reopened (SPEC §4.1), within
-- the statement and from disk: ten 12 kB readings fill it, the eleventh
-- closes it, and a small late reading that falls in its span opens a new
-- bucket instead.
SELECT tscoll.create_collection('size_full_one', 't', 'm');
SELECT tscoll.create_collection('size_full_many', 't', 'm');
CREATE TABLE size_full AS
    SELECT k, timestamptz '2021-05-18 00:00Z' + minutes * interval '1 minute' AS t,
           jsonb_build_object('k', k, 'pad', repeat('p', pad)) AS doc
      FROM (SELECT k, k AS minutes, 12000 AS pad FROM generate_series(0, 9) k
            UNION ALL VALUES (10, 30, 12000), (11, 15, 10), (12, 16, 10)) r(k, minutes, pad);
INSERT INTO size_full_one (t, m, doc) SELECT t, '1', doc FROM size_full ORDER BY k;
DO $$ BEGIN
    FOR i IN 0..12 LOOP
        INSERT INTO size_full_many (t, m, doc) SELECT t, '1', doc FROM size_full WHERE k = i;
    END LOOP;
END $$;
SELECT c, control->'min'->>'t' AS min_t, (control->>'count')::int AS n,
       control->'min'->>'k' AS min_k, control->'max'->>'k' AS max_k
  FROM (VALUES ('size_full_one'::regclass), ('size_full_many')) AS v(c), tscoll.buckets(c)
 ORDER BY c::text, min_t;
SELECT c, s->'numBucketsClosedDueToSize' AS closed_size, s->'numBucketsReopened' AS reopened
  FROM (VALUES ('size_full_one'::regclass), ('size_full_many')) AS v(c),
       tscoll.collection_stats(c) AS s ORDER BY c::text;

-- 4000 readings of 4 series, scrambled over 7.7 hours, with a string now
-- and then: the same buckets in one INSERT as one row per INSERT.
SELECT tscoll.create_collection('scrambled_one', 't', 'm');
SELECT tscoll.create_collection('scrambled_many', 't', 'm');
CREATE TABLE scrambled AS
    SELECT i, timestamptz '2021-05-18 00:00:00+00' + ((i * 137) % 4000) * interval '7 s' AS t,
           to_jsonb(i % 4) AS m,
           jsonb_build_object('v', CASE WHEN i % 97 = 0 THEN to_jsonb('s'::text) ELSE to_jsonb(i) END) AS doc
      FROM generate_series(0, 3999) i;
INSERT INTO scrambled_one (t, m, doc) SELECT t, m, doc FROM scrambled ORDER BY i;
DO $$ BEGIN
    FOR k IN 0..3999 LOOP
        INSERT INTO scrambled_many (t, m, doc) SELECT t, m, doc FROM scrambled WHERE i = k;
    END LOOP;
END $$;
CREATE FUNCTION bucket_shapes(c regclass) RETURNS TABLE (meta jsonb, control jsonb)
    LANGUAGE sql AS $$
    SELECT meta, control #- '{min,_id}' #- '{max,_id}' FROM tscoll.buckets(c) $$;
SELECT (SELECT count(*) FROM bucket_shapes('scrambled_one')) AS buckets_one,
       (SELECT count(*) FROM bucket_shapes('scrambled_many')) AS buckets_many,
       (SELECT count(*) FROM ((SELECT * FROM bucket_shapes('scrambled_one')
                               EXCEPT ALL SELECT * FROM bucket_shapes('scrambled_many'))
                              UNION ALL
                              (SELECT * FROM bucket_shapes('scrambled_many')
                               EXCEPT ALL SELECT * FROM bucket_shapes('scrambled_one'))) d) AS differing;

------------------------------------------------------------------------------
-- Span boundaries and rounding, per granularity, before 1970 and after 2106.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('g_' || g, 't', granularity => g) FROM unnest(ARRAY['seconds', 'minutes', 'hours']) g;
-- Start at a rounded time; span - 1 ms stays, span opens a new bucket.
INSERT INTO g_seconds (t) VALUES ('2021-05-18 00:00:00+00'), ('2021-05-18 00:59:59.999+00'), ('2021-05-18 01:00:00+00');
INSERT INTO g_minutes (t) VALUES ('2021-05-18 00:00:00+00'), ('2021-05-18 23:59:59.999+00'), ('2021-05-19 00:00:00+00');
INSERT INTO g_hours (t) VALUES ('2021-05-18 00:00:00+00'), ('2021-06-16 23:59:59.999+00'), ('2021-06-17 00:00:00+00');
SELECT c, b.* FROM unnest(ARRAY['g_seconds', 'g_minutes', 'g_hours']::regclass[]) c,
       LATERAL bucket_summary(c) b ORDER BY 1, 3;
SELECT tscoll.create_collection('rounding_' || g, 't', granularity => g) FROM unnest(ARRAY['seconds', 'minutes', 'hours']) g;
INSERT INTO rounding_seconds (t) VALUES ('1969-12-31 23:59:30.5+00'), ('2106-02-08 00:00:30.25+00');
INSERT INTO rounding_minutes (t) VALUES ('1969-12-31 23:59:30.5+00'), ('2106-02-08 00:00:30.25+00');
INSERT INTO rounding_hours (t) VALUES ('1969-12-31 23:59:30.5+00'), ('2106-02-08 00:00:30.25+00');
SELECT c, b.*, tscoll.objectid_time(bk._id) AS id_time
  FROM unnest(ARRAY['rounding_seconds', 'rounding_minutes', 'rounding_hours']::regclass[]) c,
       LATERAL bucket_summary(c) b,
       LATERAL (SELECT _id FROM tscoll.buckets(c) x WHERE x.control->'min'->>'t' = b.min_t) bk
 ORDER BY 1, 3;
-- Fixed bucketing rounds to bucket_rounding_seconds.
SELECT tscoll.create_collection('fixed', 't', bucket_max_span_seconds => 100, bucket_rounding_seconds => 100);
INSERT INTO fixed (t) VALUES ('1970-01-01 00:03:21+00'), ('1970-01-01 00:04:59+00'), ('1970-01-01 00:05:00+00');
SELECT * FROM bucket_summary('fixed');

-- The ends of the time range: PostgreSQL's first timestamptz (4714-11-24 BC)
-- to the end of the year 200000. Beyond them, and where a bucket would start
-- before PostgreSQL's first time, 22007; nothing is written.
SELECT tscoll.create_collection('far', 't', bucket_max_span_seconds => 31536000,
                                bucket_rounding_seconds => 31536000);
SELECT tscoll.create_collection('far_s', 't');
INSERT INTO far_s (t) VALUES ('4714-11-24 00:00:00+00 BC'), ('200000-12-31 23:59:59.999999+00');
INSERT INTO far_s (doc) VALUES ('{"t": "-004713-11-24T00:00:30.000Z"}'),
                               ('{"t": "+200000-12-31T23:59:59.999Z"}');
INSERT INTO far (t) VALUES ('4713-12-31 00:00:00+00 BC');
\set VERBOSITY sqlstate
INSERT INTO far_s (t) VALUES ('2021-05-18 00:00+00'), ('294276-12-31 23:59:59+00');
INSERT INTO far_s (t) VALUES ('2021-05-18 00:00+00'), ('200001-01-01 00:00+00');
INSERT INTO far_s (doc) VALUES ('{"t": "2021-05-18T00:00:00Z"}'), ('{"t": "-004713-11-23T23:59:59.999Z"}');
INSERT INTO far_s (doc) VALUES ('{"t": "+200001-01-01T00:00:00.000Z"}');
INSERT INTO far (t) VALUES ('2021-05-18 00:00+00'), ('4714-12-31 00:00:00+00 BC');
\set VERBOSITY default
-- insert_many refuses only that document: ordered stops there, unordered
-- goes on.
SELECT tscoll.insert_many('far', '[{"t": "2021-05-18T00:00:00Z"}, {"t": "-004713-01-01T00:00:00Z"},
                                   {"t": "2021-05-19T00:00:00Z"}]', ordered => o)
  FROM (VALUES (true), (false)) AS v(o);
SELECT t, doc->>'t' AS doc_t FROM far_s ORDER BY t;
SELECT (SELECT count(*) FROM far_s WHERE t >= '2021-01-01') AS far_s_2021,
       (SELECT count(*) FROM far) AS far, (SELECT count(*) FROM far WHERE t > '2021-01-01') AS far_2021;
-- Bounds whose span-widened form would leave timestamptz's range, and
-- infinities: no error, the right rows.
SELECT (SELECT count(*) FROM far_s WHERE t > '4714-11-24 00:00:10+00 BC') AS after_first,
       (SELECT count(*) FROM far_s WHERE t < '294276-12-31 23:30:00+00') AS before_last,
       (SELECT count(*) FROM far_s WHERE t <= 'infinity') AS to_infinity,
       (SELECT count(*) FROM far_s WHERE t > '-infinity') AS from_minus_infinity,
       (SELECT count(*) FROM far_s WHERE t = 'infinity') AS at_infinity;

------------------------------------------------------------------------------
-- Out of order and time backward (SPEC §4.1 rule 2, §4.3 reopening).
------------------------------------------------------------------------------
SELECT tscoll.create_collection('backward', 't', 'm');
INSERT INTO backward (t, m) VALUES ('2021-05-18 10:00:00+00', '1');
INSERT INTO backward (t, m) VALUES ('2021-05-18 10:30:00+00', '1');
-- Before the open bucket: it is archived, a new bucket opens.
INSERT INTO backward (t, m) VALUES ('2021-05-18 09:00:00+00', '1');
-- Fits the archived bucket again: reopened.
INSERT INTO backward (t, m) VALUES ('2021-05-18 10:40:00+00', '1');
-- Back before the reopened bucket: archived again, the 09:00 bucket is
-- reopened from disk through the default index.
INSERT INTO backward (t, m) VALUES ('2021-05-18 09:10:00+00', '1');
SELECT * FROM bucket_summary('backward');
SELECT counters('backward');
-- Reopening from disk: a new session has no catalog entry for the series.
\c
SET client_min_messages = warning;
INSERT INTO backward (t, m) VALUES ('2021-05-18 10:50:00+00', '1');
SELECT * FROM bucket_summary('backward');
-- A bucket closed for good is never reopened.
UPDATE "system.buckets.backward" SET control = control || '{"closed": true}'
 WHERE control->'min'->>'t' = '2021-05-18T10:00:00.000Z';
\c
SET client_min_messages = warning;
INSERT INTO backward (t, m) VALUES ('2021-05-18 10:55:00+00', '1');
SELECT * FROM bucket_summary('backward');

------------------------------------------------------------------------------
-- control.min/max element-wise, sparse fields, schema change per class.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('minmax', 't');
INSERT INTO minmax (doc) VALUES
    ('{"t": "2021-05-18T00:00:00Z", "x": 5, "o": {"p": 1, "q": "b"}, "a": [3, 9]}'),
    ('{"t": "2021-05-18T00:00:10Z", "x": -2.5, "o": {"p": 7, "q": "a"}, "a": [4, 1, 0]}'),
    ('{"t": "2021-05-18T00:00:20Z", "y": true, "d": {"$date": "2020-01-01T00:00:00Z"}}');
SELECT (control->'min') - '_id'::text AS min, (control->'max') - '_id'::text AS max FROM tscoll.buckets('minmax');
SELECT data - '_id'::text AS data FROM tscoll.buckets('minmax');
SELECT tscoll.create_collection('schema', 't');
INSERT INTO schema (doc) VALUES
    ('{"t": "2021-05-18T00:00:00Z", "v": 1}'),
    ('{"t": "2021-05-18T00:00:01Z", "v": 2.5}'),
    ('{"t": "2021-05-18T00:00:02Z", "v": "two"}'),
    ('{"t": "2021-05-18T00:00:03Z", "v": null}'),
    ('{"t": "2021-05-18T00:00:04Z", "v": {"n": 1}}'),
    ('{"t": "2021-05-18T00:00:05Z", "v": {"n": "one"}}'),
    ('{"t": "2021-05-18T00:00:06Z", "v": [1]}'),
    ('{"t": "2021-05-18T00:00:07Z", "v": true}'),
    ('{"t": "2021-05-18T00:00:08Z", "v": {"$date": "2020-01-01T00:00:00Z"}}'),
    ('{"t": "2021-05-18T00:00:09Z", "w": "other field"}');
SELECT n, min_t, max_t FROM bucket_summary('schema');
SELECT counters('schema');

-- A meta value too large for the default index: 54000 naming the
-- collection, the index and the meta field; a 2.5 kB one is fine.
SELECT tscoll.create_collection('big_meta', 't', 'm');
INSERT INTO big_meta (t, m)
    SELECT '2021-05-18 00:00+00', jsonb_build_object('k', string_agg(md5(i::text), ''))
      FROM generate_series(1, 200) i;
INSERT INTO big_meta (t, m)
    SELECT '2021-05-18 00:00+00', jsonb_build_object('k', string_agg(md5(i::text), ''))
      FROM generate_series(1, 80) i;
-- Past 8 kB even compressed, the entry fails before btree sees it (no
-- index named): the same 54000, naming the collection.
INSERT INTO big_meta (t, m)
    SELECT '2021-05-18 00:00+00', jsonb_build_object('k', string_agg(md5(i::text), ''))
      FROM generate_series(1, 300) i;
SELECT count(*), length(m->>'k') FROM big_meta GROUP BY 2;

------------------------------------------------------------------------------
-- Count and size limits; large measurements.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('limits', 't');
SET tscoll.bucket_max_count = 3;
INSERT INTO limits (t) SELECT timestamptz '2021-05-18 00:00:00+00' + i * interval '1 s' FROM generate_series(1, 7) i;
RESET tscoll.bucket_max_count;
SELECT n FROM bucket_summary('limits');
SELECT tscoll.create_collection('large', 't');
SET tscoll.bucket_max_size = 1000;
SET tscoll.bucket_min_count = 2;
-- Two 600-byte measurements share a bucket (under min_count), the third closes it.
INSERT INTO large (doc) SELECT format('{"t": "2021-05-18T00:00:0%sZ", "s": "%s"}', i, repeat('x', 580))::jsonb
  FROM generate_series(1, 3) i;
-- Small measurements (33 bytes each) fill the rest: 11 join the third, then 30 per bucket.
INSERT INTO large (doc) SELECT format('{"t": "2021-05-18T00:01:%sZ"}', lpad(i::text, 2, '0'))::jsonb
  FROM generate_series(10, 59) i;
RESET tscoll.bucket_max_size;
RESET tscoll.bucket_min_count;
SELECT n, min_t FROM bucket_summary('large');
SELECT counters('large');

------------------------------------------------------------------------------
-- Rollback leaves no trace; read-your-writes in the same transaction.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('tx', 't', 'm');
BEGIN;
INSERT INTO tx (t, m) VALUES ('2021-05-18 00:00:00+00', '1');
SELECT count(*) FROM tx;
ROLLBACK;
SELECT count(*) AS measurements, (SELECT count(*) FROM "system.buckets.tx") AS buckets FROM tx;
BEGIN;
INSERT INTO tx (t, m) VALUES ('2021-05-18 00:00:00+00', '1');
SAVEPOINT s;
INSERT INTO tx (t, m) VALUES ('2021-05-18 00:00:01+00', '1');
ROLLBACK TO s;
INSERT INTO tx (t, m) VALUES ('2021-05-18 00:00:02+00', '1');
COMMIT;
SELECT t FROM tx ORDER BY t;
SELECT * FROM bucket_summary('tx');
SELECT counters('tx');
-- Without a meta field there is no index to reopen through: after an
-- append rolled back, a transaction that failed after its append, and
-- a savepoint rolled back, the series still has its one bucket.
SELECT tscoll.create_collection('tx_plain', 't');
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:00+00');
BEGIN;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:01+00');
ROLLBACK;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:02+00');
BEGIN;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:03+00');
SELECT 1 / 0;
COMMIT;
BEGIN;
SAVEPOINT s;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:04+00');
ROLLBACK TO s;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:05+00');
COMMIT;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:06+00');
SELECT t FROM tx_plain ORDER BY t;
SELECT * FROM bucket_summary('tx_plain');
-- A rolled-back transaction that filled the open bucket and opened the
-- next: the series goes on in the bucket it had, whose rollover rolled
-- back with it.
SET tscoll.bucket_max_count = 10;
BEGIN;
INSERT INTO tx_plain (t)
    SELECT timestamptz '2021-05-18 00:01:00+00' + i * interval '1 s' FROM generate_series(1, 10) i;
ROLLBACK;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:07+00');
SELECT * FROM bucket_summary('tx_plain');
-- The same with a savepoint released after the rollover: the transaction
-- still takes back the bucket it opened.
BEGIN;
INSERT INTO tx_plain (t)
    SELECT timestamptz '2021-05-18 00:02:00+00' + i * interval '1 s' FROM generate_series(1, 7) i;
SAVEPOINT s;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:02:10+00');
RELEASE s;
ROLLBACK;
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:00:08+00');
SELECT * FROM bucket_summary('tx_plain');
-- A prepared transaction that commits keeps the bucket it opened as the
-- series' open one.
BEGIN;
INSERT INTO tx_plain (t)
    SELECT timestamptz '2021-05-18 00:03:00+00' + i * interval '1 s' FROM generate_series(1, 6) i;
PREPARE TRANSACTION 'tx_plain';
COMMIT PREPARED 'tx_plain';
INSERT INTO tx_plain (t) VALUES ('2021-05-18 00:03:10+00');
RESET tscoll.bucket_max_count;
SELECT * FROM bucket_summary('tx_plain');

------------------------------------------------------------------------------
-- insert_many: MongoDB's answer shape; ordered stops, unordered goes on.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('many', 't');
SELECT tscoll.insert_many('many', '[{"t": "2021-05-18T00:00:00Z"}, {"x": 1}, {"t": "2021-05-18T00:00:02Z"}]');
SELECT tscoll.insert_many('many', '[{"t": "2021-05-18T00:00:03Z"}, {"x": 1}, {"t": "2021-05-18T00:00:05Z"}, 7]', false);
SELECT count(*) FROM many;
SELECT try($$SELECT tscoll.insert_many('many', '{"t": 1}')$$);


------------------------------------------------------------------------------
-- tscoll.catalog_memory_limit (1MB in this instance, about 3,600 series):
-- over it, the least recently used series are archived, then forgotten,
-- and a forgotten series' bucket is reopened from the bucket table.
------------------------------------------------------------------------------
SHOW tscoll.catalog_memory_limit;
SELECT tscoll.create_collection('many_series', 't', 'm');
INSERT INTO many_series (t, m, doc)
SELECT '2024-01-01 00:00:00+00', to_jsonb(i), '{}' FROM generate_series(1, 5000) i;
SELECT (tscoll.catalog_stats()->>'memoryUsage')::int <= 1024 * 1024 AS within_limit;
SELECT (s->>'numBucketsArchivedDueToMemoryThreshold')::int > 0 AS archived,
       (s->>'numBucketsClosedDueToMemoryThreshold')::int > 0 AS closed,
       s->'numBucketInserts' AS inserts
  FROM tscoll.collection_stats('many_series') s;
-- series 1 was among the first forgotten: its next measurement reopens
-- its bucket from disk instead of opening a new one.
INSERT INTO many_series (t, m, doc) VALUES ('2024-01-01 00:00:01+00', '1', '{}');
SELECT s->'numBucketsReopened' AS reopened, s->'numBucketInserts' AS inserts, s->'bucketCount' AS buckets
  FROM tscoll.collection_stats('many_series') s;

------------------------------------------------------------------------------
-- A statement bigger than the flush threshold (16 MB of measurements) is
-- written in several passes; the buckets are the same as with small
-- statements.
------------------------------------------------------------------------------
SELECT tscoll.create_collection('big_statement', 't', 'm');
SELECT tscoll.create_collection('small_statements', 't', 'm');
CREATE FUNCTION rows_for(first int, last int) RETURNS TABLE (t timestamptz, m jsonb, doc jsonb)
    LANGUAGE sql AS $$
    SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '1 s', to_jsonb(i % 2),
           jsonb_build_object('i', i, 'pad', repeat('x', 1000))
      FROM generate_series(first, last) i $$;
INSERT INTO big_statement SELECT * FROM rows_for(1, 20000);
INSERT INTO small_statements SELECT * FROM rows_for(1, 5000);
INSERT INTO small_statements SELECT * FROM rows_for(5001, 10000);
INSERT INTO small_statements SELECT * FROM rows_for(10001, 15000);
INSERT INTO small_statements SELECT * FROM rows_for(15001, 20000);
SELECT count(*) AS measurements, count(DISTINCT doc->>'i') AS distinct_i FROM big_statement;
SELECT count(*) AS buckets, max((control->>'count')::int) AS largest FROM "system.buckets.big_statement";
SELECT count(*) AS differing_buckets FROM (
    (SELECT meta, min_time, max_time, control->'count' FROM "system.buckets.big_statement"
     EXCEPT ALL
     SELECT meta, min_time, max_time, control->'count' FROM "system.buckets.small_statements")
    UNION ALL
    (SELECT meta, min_time, max_time, control->'count' FROM "system.buckets.small_statements"
     EXCEPT ALL
     SELECT meta, min_time, max_time, control->'count' FROM "system.buckets.big_statement")) d;
-- it flushed (20 MB of measurements), yet every bucket was written once:
-- the two series' buckets open at each flush stayed in memory until they
-- closed
SELECT (s->>'numCommits')::int - (s->>'bucketCount')::int AS extra_writes
  FROM tscoll.collection_stats('big_statement') s;

-- Bucket rows are inserted without an INSERT statement (as logical
-- replication applies one), unless the bucket table has triggers of its
-- own (or rules, or row security): those fire as for any insert.
SELECT tscoll.create_collection('watched', 't', 'm');
CREATE TABLE bucket_rows_seen (id tscoll.objectid, count int);
CREATE FUNCTION note_bucket_row() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO bucket_rows_seen VALUES (NEW._id, (NEW.control->>'count')::int); RETURN NEW; END $$;
CREATE TRIGGER noted AFTER INSERT ON "system.buckets.watched"
    FOR EACH ROW EXECUTE FUNCTION note_bucket_row();
INSERT INTO watched (t, m, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 minute', to_jsonb(i % 2), jsonb_build_object('v', i)
  FROM generate_series(1, 10) i;
SELECT count(*) AS rows_noted, sum(count) AS measurements,
       (SELECT count(*) FROM "system.buckets.watched") AS bucket_rows
  FROM bucket_rows_seen;
-- Rules too: a rule's INSERT runs with each bucket row's.
DROP TRIGGER noted ON "system.buckets.watched";
TRUNCATE bucket_rows_seen;
CREATE RULE noted AS ON INSERT TO "system.buckets.watched"
    DO ALSO INSERT INTO bucket_rows_seen VALUES (NEW._id, (NEW.control->>'count')::int);
INSERT INTO watched (t, m, doc) VALUES ('2024-02-01', '"new series"', '{"v": 1}');
SELECT count(*) AS rows_noted, sum(count) AS measurements FROM bucket_rows_seen;

-- A subtransaction that aborts while a statement gathers its rows (a
-- function's exception block, per row) takes only its own rows with it:
-- the statement's rows gathered before it are written, and so are those
-- of statements the function ran in subtransactions that committed.
SELECT tscoll.create_collection('caught', 't', 'm');
CREATE FUNCTION caught_doc(i int) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        INSERT INTO caught (t, m, doc) VALUES ('2024-02-01'::timestamptz + i * interval '1 s', '"inner"', '{}');
        PERFORM 1 / (i % 2);
    EXCEPTION WHEN division_by_zero THEN NULL;
    END;
    RETURN jsonb_build_object('v', i);
END $$;
INSERT INTO caught (t, m, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 s', '"outer"', caught_doc(i)
  FROM generate_series(1, 10) i;
-- 10 outer rows; 5 inner ones (odd i), the even ones rolled back
SELECT m, count(*), min(doc->>'v') AS first_v FROM caught GROUP BY m ORDER BY m;
-- The same inside one transaction, with a savepoint rolled back between.
BEGIN;
INSERT INTO caught (t, m, doc)
SELECT '2024-03-01'::timestamptz + i * interval '1 s', '"outer"', caught_doc(i)
  FROM generate_series(1, 4) i;
SAVEPOINT s;
INSERT INTO caught (t, m, doc) VALUES ('2024-04-01', '"rolled back"', '{}');
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT m, count(*) FROM caught GROUP BY m ORDER BY m;
SELECT tscoll.drop_collection('caught');
DROP FUNCTION caught_doc(int);
