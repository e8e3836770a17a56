-- COPY <collection> FROM STDIN, read by tscoll itself (write/copy_from.cpp):
-- the same measurements, buckets, errors and privileges as the trigger path.
\i test/setup.psql
SET TimeZone = 'UTC';
SET DateStyle = 'ISO';

SELECT tscoll.create_collection('via_copy', 't', 'm');
SELECT tscoll.create_collection('via_insert', 't', 'm');

-- Documents the direct reader takes and documents it leaves to jsonb_in:
-- repeated keys, keys out of jsonb's order, trailing zeros, escapes, \u
-- escapes, exponents, minus zero, deep nesting, odd whitespace.
CREATE TABLE docs (i int, d text);
INSERT INTO docs VALUES
 (1, '{"t": "2024-01-01T00:00:00Z", "m": "a", "v": 1.50, "v": 2.50, "zz": 1, "b": [1, 2.0, {"y": 1, "x": 2}]}'),
 (2, '{"t": "2024-01-01T00:00:01Z", "m": "a", "s": "tab\tnew\nquote\" slash\/ back\\", "n": null, "f": false}'),
 (3, '{"t": "2024-01-01T00:00:02Z", "m": "a", "u": "caf\u00e9 \ud83d\ude00", "e": 1e3, "E": -2.5E-2}'),
 (4, '{"t": "2024-01-01T00:00:03Z", "m": "a", "z": -0, "z2": -0.000, "big": 123456789012345678901234567890.000}'),
 (5, E'\n {\t"t" :"2024-01-01T00:00:04Z" ,"m":{"k": [[[[]]]], "j": {}} , "x" : [ ] }\r\n'),
 (6, '{"t": "2024-01-01T00:00:05Z", "m": "a", "deep": ' || repeat('[', 98) || '1' || repeat(']', 98) || '}'),
 (7, '{"t": "2024-01-01T00:00:06Z", "m": "a", "é": "ü", "": "empty key", "neg": -12.340}');
-- Each with its own "_id", so that the two collections can be compared.
UPDATE docs SET d = regexp_replace(d, '\{', '{"_id": ' || i || ', ');
\copy (SELECT d FROM docs ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy via_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
INSERT INTO via_insert (doc) SELECT d::jsonb FROM docs ORDER BY i;
-- Compared as text: jsonb equality would not see 1.50 against 1.5.
SELECT (SELECT count(*) FROM (SELECT t, m::text, doc::text FROM via_copy
                              EXCEPT ALL SELECT t, m::text, doc::text FROM via_insert) d) AS copy_not_insert,
       (SELECT count(*) FROM (SELECT t, m::text, doc::text FROM via_insert
                              EXCEPT ALL SELECT t, m::text, doc::text FROM via_copy) d) AS insert_not_copy;
SELECT doc - 't' AS doc FROM via_copy ORDER BY t;
SELECT (SELECT array_agg(meta::text || control::text || data::text) FROM tscoll.buckets('via_copy')) =
       (SELECT array_agg(meta::text || control::text || data::text) FROM tscoll.buckets('via_insert'))
       AS same_buckets;

-- Columns, CSV, a header, NULLs.
COPY via_copy (t, m, doc) FROM STDIN (FORMAT csv, HEADER true);
t,m,doc
2024-01-02 00:00:00+00,"""b""","{""v"": 1}"
2024-01-02 00:00:01+00,,"{""v"": 2, ""m"": ""c""}"
,"""b""","{""t"": ""2024-01-02T00:00:02Z"", ""v"": 3}"
\.
COPY via_copy (doc, t) FROM STDIN;
{"v": 4, "m": "d"}	2024-01-02 00:00:03+00
\.
SELECT t, m, doc - '_id' AS doc FROM via_copy WHERE t >= '2024-01-02' ORDER BY t;

-- Errors: the statement fails, names the line, and writes nothing.
SELECT count(*) AS before FROM via_copy \gset
\set SHOW_CONTEXT errors
COPY via_copy (doc) FROM STDIN;
{"t": "2024-01-03T00:00:00Z", "v": 1}
{"t": "2024-01-03T00:00:01Z", "v": 
\.
COPY via_copy (doc) FROM STDIN;
{"t": "2024-01-03T00:00:00Z", "v": 1}
{"v": 2}
\.
COPY via_copy (doc) FROM STDIN;
{"t": "2024-01-03T00:00:00Z"}	extra
\.
COPY via_copy (t, doc) FROM STDIN;
2024-01-03 00:00:00+00
\.
COPY via_copy (t, doc) FROM STDIN;
not a time	{}
\.
\set SHOW_CONTEXT never
SELECT count(*) = :before AS nothing_written FROM via_copy;
-- The text format is read by tscoll (core/copy_text.hpp) as COPY's own
-- reader reads it: each input below is copied into a plain jsonb table by
-- PostgreSQL's reader and into a collection by tscoll's, and gives the
-- same documents (the plain table's then inserted into a collection) or
-- the same error, context included.
CREATE TABLE text_lines (doc jsonb);
SELECT tscoll.create_collection('text_copy', 't');
SELECT tscoll.create_collection('text_insert', 't');
CREATE FUNCTION copy_outcome(stmt text, relation text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    context text;
    hint text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS context = PG_EXCEPTION_CONTEXT, hint = PG_EXCEPTION_HINT;
    RETURN SQLSTATE || ': ' || SQLERRM || coalesce(' / HINT: ' || nullif(hint, ''), '')
        || ' / ' || replace(split_part(context, E'\n', 1), relation, 'X');
END $$;
CREATE FUNCTION both_readers(program text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    by_postgres text;
    by_tscoll text;
BEGIN
    TRUNCATE text_lines;
    DELETE FROM text_copy;
    DELETE FROM text_insert;
    by_postgres := copy_outcome(format('COPY text_lines FROM PROGRAM %L', program), 'text_lines');
    IF by_postgres = 'ok' THEN
        INSERT INTO text_insert (doc) SELECT doc FROM text_lines;
        by_postgres := 'ok: ' || (SELECT string_agg(doc::text, ' ' ORDER BY doc->>'_id') FROM text_insert);
    END IF;
    by_tscoll := copy_outcome(format('COPY text_copy (doc) FROM PROGRAM %L', program), 'text_copy');
    IF by_tscoll = 'ok' THEN
        by_tscoll := 'ok: ' || (SELECT string_agg(doc::text, ' ' ORDER BY doc->>'_id') FROM text_copy);
    END IF;
    RETURN CASE WHEN by_postgres = by_tscoll THEN 'same: ' || by_postgres
                ELSE 'differ: ' || by_postgres || ' <> ' || by_tscoll END;
END $$;
SELECT input, both_readers(format('printf ''%s''', input)) FROM (VALUES
 -- ends of line: the last without one, CRLF, CR
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n{"_id": 2, "t": "2024-01-01T00:00:01Z"}'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\r\n{"_id": 2, "t": "2024-01-01T00:00:01Z"}\r\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\r{"_id": 2, "t": "2024-01-01T00:00:01Z"}\r'),
 -- escapes: tab, octal, hex, an escaped backslash in a JSON string, an
 -- escaped end of line, escaped non-ASCII bytes
 ('{"_id": 1,\\t"t": "2024-01-01T00:00:00Z", "s": "\\101\\x42 \\\\"q\\\\" é"}\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z",\\\n"s": "\\xc3\\xa9"}\n'),
 -- the end marker: what follows is not read; alone on its last line
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n\\.\nnot json\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\\.\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n\\.'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n\\.x\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\r\n\\.\n'),
 -- lines that end otherwise than the first
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n{"_id": 2, "t": "2024-01-01T00:00:01Z"}\r\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\r\n{"_id": 2, "t": "2024-01-01T00:00:01Z"}\n'),
 -- not UTF-8: as read, by an escape, a NUL
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z", "s": "\377"}\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z", "s": "\\xff"}\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z", "s": "\\0"}\n'),
 -- fields: one too many; an empty line
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\tx\n'),
 ('{"_id": 1, "t": "2024-01-01T00:00:00Z"}\n\n')) v(input);
DROP FUNCTION both_readers(text);
DROP FUNCTION copy_outcome(text, text);
DROP TABLE text_lines;
SELECT tscoll.drop_collection('text_copy'), tscoll.drop_collection('text_insert');

-- Many rows: parsed on a second thread in batches (384 KiB of text) while the
-- backend stores them, the rows jsonb_in reads (\u escapes) among them.
SELECT tscoll.create_collection('many_copy', 't', 'm');
SELECT tscoll.create_collection('many_insert', 't', 'm');
CREATE TABLE many_docs AS
  SELECT i, format('{"_id": %s, "t": "%s", "m": %s, "v": %s%s}', i,
                   to_char(timestamptz '2024-03-01 00:00:00+00' + i * interval '1 s',
                           'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   i % 10, i, CASE WHEN i % 7 = 0 THEN ', "u": "\u00e9"' ELSE '' END) AS d
    FROM generate_series(1, 5000) i;
\copy (SELECT d FROM many_docs ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy many_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
INSERT INTO many_insert (doc) SELECT d::jsonb FROM many_docs ORDER BY i;
SELECT count(*), sum((doc->>'v')::int), count(*) FILTER (WHERE doc->>'u' = 'é') FROM many_copy;
SELECT (SELECT array_agg(meta::text || control::text || data::text ORDER BY _id) FROM tscoll.buckets('many_copy')) =
       (SELECT array_agg(meta::text || control::text || data::text ORDER BY _id) FROM tscoll.buckets('many_insert'))
       AS same_buckets;
-- A bad row past the first batches is named by its line, and nothing of
-- the COPY is written: a row that is not an object, a row jsonb_in
-- refuses, a row with an extra field.
SELECT count(*) AS many_before FROM many_copy \gset
\set SHOW_CONTEXT errors
\copy (SELECT CASE WHEN i = 4321 THEN '[1]' ELSE d END FROM many_docs ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy many_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
\copy (SELECT CASE WHEN i = 3000 THEN '{"t": ' ELSE d END FROM many_docs ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy many_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
\pset format unaligned
\pset tuples_only on
\o /tmp/tscoll_regress_copy_from.txt
SELECT CASE WHEN i = 2500 THEN d || E'\textra' ELSE d END FROM many_docs ORDER BY i;
\o
\pset format aligned
\pset tuples_only off
\copy many_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
\set SHOW_CONTEXT never
SELECT count(*) = :many_before AS nothing_written FROM many_copy;
SELECT tscoll.drop_collection('many_copy'), tscoll.drop_collection('many_insert');
DROP TABLE many_docs;

-- The parser reads a meta text once: rows repeating it byte for byte are
-- prepared from what it learnt. Spellings of one series (key order,
-- spaces), null and absent metas, a doc giving its meta twice (jsonb
-- keeps the last), nested metas: the same buckets as INSERT makes.
SELECT tscoll.create_collection('spelled_copy', 't', 'm');
SELECT tscoll.create_collection('spelled_insert', 't', 'm');
CREATE TABLE spelled_docs AS
  SELECT i, format('{"_id": %s, "t": "%s", %s"v": %s}', i,
                   to_char(timestamptz '2024-03-01 00:00:00+00' + i * interval '1 s',
                           'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   CASE i % 7
                     WHEN 0 THEN format('"m": {"h": %s, "r": "x"}, ', i % 5)
                     WHEN 1 THEN format('"m": {"r": "x", "h": %s}, ', i % 5)
                     WHEN 2 THEN format('"m":{"h":%s,"r":"x"}, ', i % 5)
                     WHEN 3 THEN '"m": null, '
                     WHEN 4 THEN ''
                     WHEN 5 THEN format('"m": {"h": 99}, "m": {"h": %s, "r": "x"}, ', i % 5)
                     ELSE format('"m": {"h": %s, "n": {"a": [1, "]}"]}}, ', i % 5)
                   END, i) AS d
    FROM generate_series(1, 5000) i;
\copy (SELECT d FROM spelled_docs ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy spelled_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
INSERT INTO spelled_insert (doc) SELECT d::jsonb FROM spelled_docs ORDER BY i;
SELECT count(*), count(DISTINCT m) AS series, sum((doc->>'v')::int) FROM spelled_copy;
SELECT (SELECT array_agg(meta::text || control::text || data::text ORDER BY _id) FROM tscoll.buckets('spelled_copy')) =
       (SELECT array_agg(meta::text || control::text || data::text ORDER BY _id) FROM tscoll.buckets('spelled_insert'))
       AS same_buckets;
-- A repeated meta still counts in the measurement's size: the row that
-- passes the limit with it (not without it) fails as it does by INSERT,
-- and nothing is written.
SET tscoll.max_measurement_size = '1kB';
CREATE TABLE padded AS
  SELECT i, CASE WHEN i = 2996 THEN replace(d, '"v"', format('"pad": "%s", "v"', repeat('p', 965))) ELSE d END AS d
    FROM spelled_docs WHERE i % 7 = 0;
SELECT d::jsonb - 'm' AS without_meta FROM padded WHERE i = 2996 \gset
BEGIN;
INSERT INTO spelled_insert (doc) VALUES (:'without_meta');
ROLLBACK;
\set SHOW_CONTEXT errors
INSERT INTO spelled_insert (doc) SELECT d::jsonb FROM padded WHERE i = 2996;
\copy (SELECT d FROM padded ORDER BY i) TO '/tmp/tscoll_regress_copy_from.txt'
\copy spelled_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
\set SHOW_CONTEXT never
RESET tscoll.max_measurement_size;
DROP TABLE padded;
SELECT count(*) AS still_5000 FROM spelled_copy;
SELECT tscoll.drop_collection('spelled_copy'), tscoll.drop_collection('spelled_insert');
DROP TABLE spelled_docs;

-- 100,000 good rows and a bad one: nothing is written, although the rows
-- before it were past the first flush (16 MB) and written to buckets.
\copy (SELECT format('{"t": "%s", "m": %s, "v": %s, "pad": "%s"}', to_char(timestamptz '2024-02-01 00:00:00+00' + i * interval '1 s', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), i % 100, i, repeat('p', 200)) FROM generate_series(1, 100000) i UNION ALL SELECT '{"v": "no time"}') TO '/tmp/tscoll_regress_copy_from.txt'
SELECT try($$COPY via_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'$$);
\copy via_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'
SELECT count(*) = :before AS nothing_written FROM via_copy;
SELECT count(*) FROM "system.buckets.via_copy" WHERE min_time >= '2024-02-01';

-- Privileges: INSERT on the view is what COPY needs.
CREATE ROLE copy_writer;
CREATE ROLE copy_stranger;
GRANT INSERT ON via_copy TO copy_writer;
SET ROLE copy_writer;
COPY via_copy (doc) FROM STDIN;
{"t": "2024-01-04T00:00:00Z", "m": "w", "v": 1}
\.
-- A server file needs pg_read_server_files, as for any COPY.
SELECT try($$COPY via_copy (doc) FROM '/tmp/tscoll_regress_copy_from.txt'$$);
SET ROLE copy_stranger;
COPY via_copy (doc) FROM STDIN;
{"t": "2024-01-04T00:00:01Z", "m": "w", "v": 2}
\.
RESET ROLE;
-- A program's output is read as a file's (by a superuser here).
COPY via_copy (doc) FROM PROGRAM 'printf ''{"t": "2024-01-04T00:00:03Z", "m": "p", "v": 4}\n''';
SELECT t, m, doc - '_id' AS doc FROM via_copy WHERE m = '"p"';
SELECT t, m, doc - '_id' AS doc FROM via_copy WHERE m = '"w"';
-- Binary COPY reads typed values (its rows as the other formats' give
-- them); a view with a column default takes PostgreSQL's path.
\copy (SELECT t, m, doc FROM via_copy WHERE m = '"w"') TO '/tmp/tscoll_regress_copy_from.bin' (FORMAT binary)
\copy via_insert FROM '/tmp/tscoll_regress_copy_from.bin' (FORMAT binary)
SELECT (SELECT array_agg(doc ORDER BY t) FROM via_copy WHERE m = '"w"') =
       (SELECT array_agg(doc ORDER BY t) FROM via_insert WHERE m = '"w"') AS binary_same;
COPY via_insert (t, doc) FROM PROGRAM 'printf ''PGCOPY\n\377\r\n\0''' (FORMAT binary);
ALTER VIEW via_insert ALTER COLUMN m SET DEFAULT '"defaulted"';
COPY via_insert (doc) FROM STDIN;
{"t": "2024-01-04T00:00:02Z", "v": 3}
\.
SELECT t, m, doc - '_id' AS doc FROM via_insert WHERE t >= '2024-01-04' ORDER BY t;
SELECT c, s->'numMeasurements' AS measurements, s->'numCommits' AS commits
  FROM unnest(ARRAY['via_copy', 'via_insert']) c, tscoll.collection_stats(c) s;
REVOKE ALL ON via_copy FROM copy_writer;
DROP ROLE copy_writer;
DROP ROLE copy_stranger;
