-- Expiry rules (SPEC §9) through tscoll.run_ttl_pass(now): a bucket goes
-- whole once control.min.<time> <= now - expireAfterSeconds - span.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT tscoll.create_collection('c', 't', 'm', expire_after_seconds => 3600);
-- buckets starting at 00:00, 01:00, 02:00 (span 3600 s, minute rounding)
INSERT INTO c (t, m, doc) VALUES ('2024-01-01 00:00:30+00', '"a"', '{}'),
                                 ('2024-01-01 01:00:30+00', '"a"', '{}'),
                                 ('2024-01-01 02:00:30+00', '"a"', '{}');
SELECT control->'min'->>'t' AS min FROM tscoll.buckets('c') ORDER BY 1;
-- now = 02:00 + 3600 + 3600 - 1 ms: the 00:00 and 01:00 buckets
SELECT tscoll.run_ttl_pass('2024-01-01 03:59:59.999+00');
SELECT tscoll.run_ttl_pass('2024-01-01 03:59:59.999+00');
SELECT control->'min'->>'t' AS min FROM tscoll.buckets('c') ORDER BY 1;
-- exactly at the limit: gone
SELECT tscoll.run_ttl_pass('2024-01-01 04:00:00+00');
SELECT count(*) FROM c;

-- Partial TTL indexes expire the buckets their filter matches, with their
-- own expiry; the collection's expiry may be off.
SELECT tscoll.create_collection('p', 't', 'm');
SELECT tscoll.create_index('p', '{"t": 1}',
    '{"expireAfterSeconds": 60, "partialFilterExpression": {"m.region": "eu"}}');
INSERT INTO p (t, m, doc) VALUES ('2024-01-01 00:00:00+00', '{"region": "eu"}', '{}'),
                                 ('2024-01-01 00:00:00+00', '{"region": "us"}', '{}'),
                                 ('2024-01-01 05:00:00+00', '{"region": "eu"}', '{}');
SELECT tscoll.run_ttl_pass('2024-01-01 01:01:00+00');
SELECT m, t FROM p ORDER BY m->>'region', t;
-- coll_mod: a collection-wide expiry on top
SELECT tscoll.coll_mod('p', '{"expireAfterSeconds": 0}');
SELECT tscoll.run_ttl_pass('2024-01-01 01:00:00+00');
SELECT m, t FROM p ORDER BY m->>'region', t;
-- "off": nothing more expires
SELECT tscoll.coll_mod('p', '{"expireAfterSeconds": "off"}');
SELECT tscoll.drop_index('p', 't_1');
SELECT tscoll.run_ttl_pass('2100-01-01 00:00:00+00');
SELECT count(*) FROM p;
-- an expiry beyond any date never expires anything
SELECT tscoll.coll_mod('p', '{"expireAfterSeconds": 4611686018427387903}');
SELECT tscoll.run_ttl_pass('2100-01-01 00:00:00+00');

-- A partial filter compares as MongoDB does: $lt 5 matches numbers only
-- (not "abc", null, true or an object, which jsonb would order around 5);
-- null matches null and a missing field.
SELECT tscoll.create_collection('typed_filter', 't', 'm');
SELECT tscoll.create_index('typed_filter', '{"t": 1}',
    '{"expireAfterSeconds": 0, "partialFilterExpression": {"m.id": {"$lt": 5}}}');
INSERT INTO typed_filter (t, m, doc)
    SELECT '2024-01-01 00:00:00+00', m::jsonb, '{}'
      FROM unnest(ARRAY['{"id": 3}', '{"id": 9}', '{"id": "abc"}', '{"id": null}', '{"id": true}',
                        '{"id": {"a": 1}}', '{}']) AS m;
SELECT tscoll.run_ttl_pass('2024-01-02 00:00:00+00') AS deleted;
SELECT m FROM typed_filter ORDER BY m::text;
SELECT tscoll.drop_index('typed_filter', 't_1');
SELECT tscoll.create_index('typed_filter', '{"t": 1}',
    '{"expireAfterSeconds": 0, "partialFilterExpression": {"m.id": null}}');
SELECT tscoll.run_ttl_pass('2024-01-02 00:00:00+00') AS deleted;
SELECT m FROM typed_filter ORDER BY m::text;
-- A backslash in a filter's key stays inside its literal, also where
-- standard_conforming_strings is off.
SET standard_conforming_strings = off;
SELECT tscoll.drop_index('typed_filter', 't_1');
SELECT tscoll.create_index('typed_filter', '{"t": 1}',
    $j${"expireAfterSeconds": 0, "partialFilterExpression": {"m.a\\": 1}}$j$);
SELECT tscoll.run_ttl_pass('2024-01-02 00:00:00+00') AS deleted;
RESET standard_conforming_strings;
SELECT tscoll.drop_collection('typed_filter');

-- Only the caller's collections expire (all of them, for a superuser).
CREATE ROLE tscoll_ttl_owner;
GRANT CREATE ON SCHEMA public TO tscoll_ttl_owner;
SET ROLE tscoll_ttl_owner;
SELECT tscoll.create_collection('mine', 't', expire_after_seconds => 0);
INSERT INTO mine (t, doc) VALUES ('2024-01-01 00:00:00+00', '{}');
RESET ROLE;
INSERT INTO c (t, m, doc) VALUES ('2024-01-01 00:00:00+00', '"a"', '{}');
SET ROLE tscoll_ttl_owner;
SELECT tscoll.run_ttl_pass('2030-01-01 00:00:00+00');
RESET ROLE;
SELECT count(*) AS still_in_c FROM c;
SELECT tscoll.run_ttl_pass('2030-01-01 00:00:00+00');
SELECT count(*) AS left_in_c FROM c;
SELECT tscoll.drop_collection('mine');
REVOKE CREATE ON SCHEMA public FROM tscoll_ttl_owner;
DROP ROLE tscoll_ttl_owner;

-- Expired buckets are forgotten by the catalog: the next measurement of the
-- series opens a new bucket rather than appending to a deleted one.
INSERT INTO c (t, m, doc) VALUES ('2024-06-01 00:00:00+00', '"a"', '{}');
SELECT tscoll.run_ttl_pass('2024-06-01 02:00:00+00');
INSERT INTO c (t, m, doc) VALUES ('2024-06-01 00:00:01+00', '"a"', '{}');
SELECT count(*) AS buckets, sum((control->>'count')::int) AS measurements FROM "system.buckets.c";

-- Times before 1970 and after 2038 and 2106 (the ObjectId's 32 bits wrap;
-- expiry reads control.min, never the _id). The only collection now:
SELECT tscoll.drop_collection('c');
SELECT tscoll.drop_collection('p');
SELECT tscoll.create_collection('far', 't', 'm', expire_after_seconds => 0);
INSERT INTO far (t, m, doc) VALUES ('1969-12-31 23:00:00+00', '"pre1970"', '{}'),
                                   ('2040-01-01 00:00:00+00', '"post2038"', '{}'),
                                   ('2107-01-01 00:00:00+00', '"post2106"', '{}');
SELECT meta, tscoll.objectid_time(_id), min_time FROM "system.buckets.far" ORDER BY min_time;
-- each kept 1 ms before its limit (min + span), deleted at it
SELECT tscoll.run_ttl_pass('1969-12-31 23:59:59.999+00') AS deleted;
SELECT tscoll.run_ttl_pass('1970-01-01 00:00:00+00') AS deleted;
SELECT tscoll.run_ttl_pass('2040-01-01 00:59:59.999+00') AS deleted;
SELECT tscoll.run_ttl_pass('2040-01-01 01:00:00+00') AS deleted;
SELECT tscoll.run_ttl_pass('2107-01-01 00:59:59.999+00') AS deleted;
SELECT tscoll.run_ttl_pass('2107-01-01 01:00:00+00') AS deleted;
SELECT count(*) FROM far;
