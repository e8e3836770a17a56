-- tscoll.objectid: text I/O, ordering, hashing, time component.
\i test/setup.psql

SELECT '5f0000000000000000000001'::tscoll.objectid;
-- Upper-case input is accepted, output is lower case.
SELECT '5F00000000000000000000AB'::tscoll.objectid;
SELECT pg_typeof('5f0000000000000000000001'::tscoll.objectid);

-- Malformed text: too short, too long, not hex, empty.
SELECT '5f000000000000000000001'::tscoll.objectid;
SELECT '5f00000000000000000000011'::tscoll.objectid;
SELECT '5f000000000000000000000g'::tscoll.objectid;
SELECT ''::tscoll.objectid;

-- Byte order, time first; operators resolve without tscoll on search_path.
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge,
       tscoll.objectid_cmp(a, b) AS cmp
  FROM (VALUES ('000000010000000000000000'::tscoll.objectid, '000000020000000000000000'::tscoll.objectid),
               ('ffffffff0000000000000000', '000000000000000000000001'),
               ('5f0000000000000000000001', '5f0000000000000000000001')) v(a, b);

-- The time component is unsigned seconds since 1970: 0, 2^31 - 1, 2^31
-- (2038, past int32) and 2^32 - 1 (2106).
SET TimeZone = 'UTC';
SELECT id, tscoll.objectid_time(id)
  FROM (VALUES ('000000000000000000000000'::tscoll.objectid), ('7fffffff0000000000000000'),
               ('800000000000000000000000'), ('ffffffff0000000000000000'),
               ('60a305800000000000000000')) v(id);

-- btree and hash operator classes: sorting, DISTINCT, indexes, hash joins.
CREATE TABLE ids (id tscoll.objectid);
INSERT INTO ids SELECT lpad(to_hex(i % 50), 24, '0')::tscoll.objectid FROM generate_series(1, 1000) i;
SELECT count(DISTINCT id), min(id), max(id) FROM ids;
SELECT id FROM ids ORDER BY id DESC LIMIT 2;
CREATE INDEX ids_btree ON ids (id);
SELECT amname, opcname FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
 WHERE opcintype = 'tscoll.objectid'::regtype AND opcdefault ORDER BY amname;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ids WHERE id = '000000000000000000000007';
SELECT count(*) FROM ids WHERE id = '000000000000000000000007';
EXPLAIN (COSTS OFF) SELECT max(id) FROM ids;
CREATE INDEX ids_hash ON ids USING hash (id);
DROP INDEX ids_btree;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ids WHERE id = '000000000000000000000007';
SELECT count(*) FROM ids WHERE id = '000000000000000000000007';
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ids a JOIN ids b USING (id);
SELECT count(*) FROM ids a JOIN ids b USING (id);
RESET enable_mergejoin;
RESET enable_nestloop;
SELECT tscoll.objectid_hash('000000000000000000000007') = tscoll.objectid_hash('000000000000000000000007');

-- Binary I/O round-trips (COPY BINARY).
SELECT current_setting('data_directory') || '/tscoll_objectid.bin' AS bin_file \gset
COPY ids TO :'bin_file' WITH (FORMAT binary);
CREATE TABLE ids2 (id tscoll.objectid);
COPY ids2 FROM :'bin_file' WITH (FORMAT binary);
SELECT count(*) FROM ids2 JOIN (SELECT DISTINCT id FROM ids) d USING (id);
DROP TABLE ids, ids2;
