-- Ownership and privileges around the catalog and the collection functions.
\i test/setup.psql

GRANT EXECUTE ON FUNCTION try(text) TO PUBLIC;
-- tscoll has no SECURITY DEFINER code: every function runs with its
-- caller's rights (expiry switches to the collection's owner, see below).
SELECT count(*) AS security_definer FROM pg_proc
 WHERE pronamespace = 'tscoll'::regnamespace AND prosecdef;
CREATE ROLE tscoll_alice;
CREATE ROLE tscoll_bob;
CREATE SCHEMA shared;
GRANT USAGE, CREATE ON SCHEMA shared TO tscoll_alice, tscoll_bob;

-- A non-superuser creates a collection and owns all of it.
SET ROLE tscoll_alice;
SELECT tscoll.create_collection('shared.alice_data', 't', 'm');
INSERT INTO shared.alice_data (t, m, doc) VALUES ('2024-01-01 00:00:00+00', '"x"', '{"v": 1}');
RESET ROLE;
SELECT relname, pg_get_userbyid(relowner) FROM pg_class
 WHERE relnamespace = 'shared'::regnamespace ORDER BY 1;

-- Another role sees no collection it cannot read, cannot read the buckets,
-- cannot drop it, and cannot change or remove its catalog row.
SET ROLE tscoll_bob;
SELECT name FROM tscoll.list_collections();
SELECT try($$SELECT * FROM tscoll.buckets('shared.alice_data')$$);
SELECT try($$SELECT tscoll.collection_stats('shared.alice_data')$$);
SELECT try($$SELECT * FROM tscoll._buckets('shared.alice_data')$$);
SELECT try($$SELECT * FROM tscoll._bucket_totals('shared.alice_data')$$);
SELECT try($$SELECT tscoll.insert_many('shared.alice_data', '[{"t": "2024-01-01T00:00:01Z"}]')$$);
SELECT try($$INSERT INTO shared.alice_data (t, m, doc) VALUES ('2024-01-01 00:00:01+00', '"x"', '{}')$$);
SELECT try($$SELECT * FROM shared.alice_data$$);
SELECT try($$SELECT * FROM shared."system.buckets.alice_data"$$);
SELECT try($$UPDATE shared.alice_data SET m = '"y"'$$);
SELECT try($$DELETE FROM shared.alice_data$$);
SELECT try($$DELETE FROM shared.alice_data WHERE (doc->>'v')::int = 1$$);
SELECT try($$DELETE FROM shared."system.buckets.alice_data"$$);
SELECT try($$UPDATE shared."system.buckets.alice_data" SET meta = '"y"'$$);
SELECT try($$SELECT tscoll._bucket_counters('shared.alice_data')$$);
SELECT try($$SELECT tscoll.list_indexes('shared.alice_data')$$);
SELECT try($$SELECT tscoll.create_index('shared.alice_data', '{"m": -1}')$$);
SELECT try($$SELECT tscoll.drop_index('shared.alice_data', 'm_1_t_1')$$);
SELECT try($$SELECT tscoll.coll_mod('shared.alice_data', '{"expireAfterSeconds": 1}')$$);
SELECT try($$SELECT tscoll._forget_series('shared."system.buckets.alice_data"')$$);
-- Expiry: bob's pass skips what he does not own, whatever "now" he gives;
-- the internal functions refuse him.
SELECT tscoll.run_ttl_pass('2200-01-01');
SELECT try($$SELECT tscoll._expire_as_owner('shared.alice_data', '2200-01-01')$$);
SELECT try($$INSERT INTO tscoll.indexes (collection, name, keys, options)
              VALUES ('shared.alice_data', 'x', '{"t": 1}', '{"expireAfterSeconds": 0}')$$);
WITH changed AS (UPDATE tscoll.indexes SET options = '{"expireAfterSeconds": 0}' RETURNING 1)
SELECT count(*) AS updated FROM changed;
SELECT try($$SELECT tscoll.drop_collection('shared.alice_data')$$);
SELECT try($$DROP VIEW shared.alice_data$$);
WITH changed AS (UPDATE tscoll.collections SET expire_after_seconds = 1 RETURNING 1)
SELECT count(*) AS updated FROM changed;
WITH removed AS (DELETE FROM tscoll.collections RETURNING 1)
SELECT count(*) AS deleted FROM removed;
SELECT try($$INSERT INTO tscoll.collections (view, bucket_table, time_field, bucket_max_span_seconds, bucket_rounding_seconds)
              VALUES ('shared.alice_data', 'shared."system.buckets.alice_data"', 'x', 1, 1)$$);
-- ... and cannot take over its name: identical options return the existing
-- collection (as CREATE TABLE IF NOT EXISTS would), other options are refused.
SELECT try($$SELECT tscoll.create_collection('shared.alice_data', 't', 'm')$$);
SELECT try($$SELECT tscoll.create_collection('shared.alice_data', 'other')$$);
RESET ROLE;
SELECT view, expire_after_seconds FROM tscoll.collections;

-- GRANT SELECT on the view makes the collection visible and readable,
-- through tscoll's functions too; the bucket table stays the owner's, and
-- writing needs INSERT.
GRANT SELECT ON shared.alice_data TO tscoll_bob;
SET ROLE tscoll_bob;
SELECT name FROM tscoll.list_collections();
SELECT t, m, doc - '_id' FROM shared.alice_data;
SELECT meta, control->'count' AS count, data->'v' AS v FROM tscoll.buckets('shared.alice_data');
SELECT tscoll.collection_stats('shared.alice_data')->'numMeasurements' AS measurements;
SELECT try($$SELECT * FROM shared."system.buckets.alice_data"$$);
SELECT try($$SELECT tscoll.insert_many('shared.alice_data', '[{"t": "2024-01-01T00:00:01Z"}]')$$);
RESET ROLE;
GRANT INSERT ON shared.alice_data TO tscoll_bob;
SET ROLE tscoll_bob;
SELECT tscoll.insert_many('shared.alice_data', '[{"t": "2024-01-01T00:00:01Z", "m": "x"}]');
INSERT INTO shared.alice_data (t, m, doc) VALUES ('2024-01-01 00:00:02+00', '"x"', '{}');
SELECT count(*) FROM shared.alice_data;
SELECT try($$INSERT INTO shared."system.buckets.alice_data" (_id, control, data) VALUES ('5f5e10000000000000000001', '{}', '\x00')$$);
RESET ROLE;

-- No tscoll function lets one owner touch another owner's collection.
CREATE ROLE tscoll_carol;
GRANT USAGE, CREATE ON SCHEMA shared TO tscoll_carol;
SET ROLE tscoll_carol;
SELECT tscoll.create_collection('shared.carol_data', 't', 'm');
SELECT try($$SELECT tscoll.coll_mod('shared.alice_data', '{"expireAfterSeconds": 1}')$$);
SELECT try($$SELECT tscoll.create_index('shared.alice_data', '{"m": -1}')$$);
SELECT try($$SELECT tscoll.drop_index('shared.alice_data', 'm_1_t_1')$$);
SELECT try($$SELECT tscoll.drop_collection('shared.alice_data')$$);
SELECT try($$SELECT tscoll._expire_as_owner('shared.alice_data', '2200-01-01')$$);
SELECT try($$UPDATE tscoll.collections SET bucket_table = 'shared."system.buckets.alice_data"'
              WHERE view = 'shared.carol_data'::regclass$$);
SELECT tscoll.run_ttl_pass('2200-01-01');
SELECT tscoll.drop_collection('shared.carol_data');
RESET ROLE;
SELECT count(*) FROM shared.alice_data;

-- Expiry runs as the collection's owner, security-restricted: a trigger the
-- owner puts on the bucket table does not run with the rights of a
-- superuser who runs the TTL pass (nor of the TTL monitor).
SET ROLE tscoll_alice;
SELECT tscoll.coll_mod('shared.alice_data', '{"expireAfterSeconds": 60}');
CREATE TABLE shared.seen_by_trigger (who name, attempt text);
CREATE FUNCTION shared.escalate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        ALTER ROLE tscoll_alice SUPERUSER;
        INSERT INTO shared.seen_by_trigger VALUES (current_user, 'became superuser');
    EXCEPTION WHEN OTHERS THEN
        INSERT INTO shared.seen_by_trigger VALUES (current_user, SQLSTATE || ': ' || SQLERRM);
    END;
    RETURN OLD;
END $$;
CREATE TRIGGER escalate BEFORE DELETE ON shared."system.buckets.alice_data"
    FOR EACH ROW EXECUTE FUNCTION shared.escalate();
RESET ROLE;
-- bob still cannot expire it, even with the function run_ttl_pass() uses inside
SET ROLE tscoll_bob;
SELECT try($$SELECT tscoll._expire_collection('shared.alice_data', '2200-01-01')$$);
RESET ROLE;
SELECT tscoll.run_ttl_pass('2200-01-01');
SELECT * FROM shared.seen_by_trigger;
SELECT rolsuper FROM pg_roles WHERE rolname = 'tscoll_alice';
SELECT count(*) FROM shared.alice_data;
SET ROLE tscoll_alice;
DROP TABLE shared.seen_by_trigger;
DROP TRIGGER escalate ON shared."system.buckets.alice_data";
DROP FUNCTION shared.escalate();
RESET ROLE;

-- A view of the owner's on the collection is merged into the queries that
-- read it (doc/REFERENCE.md §3.4): reading the view is still checked, and
-- the view still reads the collection with its owner's rights.
SET ROLE tscoll_alice;
INSERT INTO shared.alice_data (t, m, doc) VALUES ('2024-01-02 00:00:00+00', '"x"', '{"v": 2}');
CREATE VIEW shared.alice_values AS SELECT t, (doc->>'v')::float8 AS v FROM shared.alice_data;
RESET ROLE;
SET ROLE tscoll_bob;
SELECT try($$SELECT max(v) FROM shared.alice_values WHERE t >= '2024-01-01'$$);
SELECT try($$WITH r AS (SELECT * FROM shared.alice_values) SELECT count(*) FROM r WHERE v > 0$$);
RESET ROLE;
SET ROLE tscoll_alice;
GRANT SELECT ON shared.alice_values TO tscoll_bob;
RESET ROLE;
SET ROLE tscoll_bob;
SELECT max(v) FROM shared.alice_values WHERE t >= '2024-01-01';
WITH r AS (SELECT * FROM shared.alice_values) SELECT count(*) FROM r WHERE v > 0;
SELECT try($$SELECT count(*) FROM (SELECT t FROM shared.alice_data) r WHERE t >= '2024-01-01'$$);
RESET ROLE;
SET ROLE tscoll_alice;
DROP VIEW shared.alice_values;
RESET ROLE;

-- The owner drops it.
SET ROLE tscoll_alice;
SELECT tscoll.drop_collection('shared.alice_data');
RESET ROLE;
SELECT count(*) FROM tscoll.collections;
DROP SCHEMA shared CASCADE;

DROP ROLE tscoll_alice;
DROP ROLE tscoll_bob;
DROP ROLE tscoll_carol;
