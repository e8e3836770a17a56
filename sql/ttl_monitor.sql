-- The TTL monitor (SPEC §9) finds this database on its own and deletes its
-- expired buckets. The test instance starts with the monitor off.
\i test/setup.psql
SELECT tscoll.create_collection('expiring', 't', 'm', expire_after_seconds => 60);
SELECT tscoll.create_collection('keeping', 't', 'm');
INSERT INTO expiring (t, m, doc) VALUES ('2020-01-01 00:00:00+00', '1', '{}'),
                                        ('2020-01-01 00:00:00+00', '2', '{}'),
                                        (now(), '1', '{}');
INSERT INTO keeping (t, m, doc) VALUES ('2020-01-01 00:00:00+00', '1', '{}');
-- A collection whose expiry fails (a trigger refuses the DELETE): the
-- error is logged and recorded, and the other collections still expire.
SELECT tscoll.create_collection('failing', 't', 'm', expire_after_seconds => 60);
INSERT INTO failing (t, m, doc) VALUES ('2020-01-01 00:00:00+00', '1', '{}');
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'refused by a trigger';
END $$;
CREATE TRIGGER refuse BEFORE DELETE ON "system.buckets.failing" FOR EACH ROW EXECUTE FUNCTION refuse();
ALTER SYSTEM SET tscoll.ttl_monitor_enabled = on;
ALTER SYSTEM SET tscoll.ttl_monitor_sleep_secs = 1;
ALTER SYSTEM SET tscoll.ttl_batch_size = 1;
SELECT pg_reload_conf();
-- wait (at most 60 s) for the two expired buckets to go
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN (SELECT count(*) FROM expiring) = 1;
        PERFORM pg_sleep(0.2);
    END LOOP;
END $$;
SELECT count(*) AS left_in_expiring FROM expiring;
SELECT count(*) AS left_in_keeping FROM keeping;
-- its pass over this database is recorded, without errors
DO $$
BEGIN
    FOR i IN 1..100 LOOP
        EXIT WHEN EXISTS (SELECT FROM tscoll.ttl_status() WHERE database = current_database()
                                                            AND last_pass_start > now());
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT last_pass_end >= last_pass_start AS ended, errors, last_error
  FROM tscoll.ttl_status() WHERE database = current_database();
SELECT count(*) AS left_in_failing FROM failing;
DROP TRIGGER refuse ON "system.buckets.failing";
-- The postmaster restarts the monitor when it dies.
SELECT pid AS old_monitor FROM pg_stat_activity WHERE backend_type = 'tscoll TTL monitor' \gset
SELECT pg_terminate_backend(:old_monitor);
SELECT set_config('test.old_monitor', :'old_monitor', false) IS NOT NULL AS noted;
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'tscoll TTL monitor'
                                                         AND pid <> current_setting('test.old_monitor')::int);
        PERFORM pg_sleep(0.1);
    END LOOP;
END $$;
SELECT count(*) AS new_monitors FROM pg_stat_activity
 WHERE backend_type = 'tscoll TTL monitor' AND pid <> :old_monitor;
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN (SELECT count(*) FROM failing) = 0;
        PERFORM pg_sleep(0.2);
    END LOOP;
END $$;
SELECT count(*) AS left_in_failing FROM failing;
-- A database created later, and an extension created in it later, are
-- picked up; dropping that database is not blocked by the monitor.
\set regress_db :DBNAME
CREATE DATABASE tscoll_ttl_later;
\c tscoll_ttl_later
SET client_min_messages = warning;
CREATE EXTENSION tscoll;
RESET client_min_messages;
-- Its workers connect with a hostile search_path: they call nothing planted.
\set ECHO none
\i test/hostile_objects.psql
\set ECHO all
DO $$ BEGIN
    EXECUTE format('ALTER DATABASE %I SET search_path = evil, pg_catalog, public', current_database());
END $$;
SELECT tscoll.create_collection('later', 't', expire_after_seconds => 0);
INSERT INTO later (t, doc) VALUES ('2020-01-01 00:00:00+00', '{}');
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        EXIT WHEN (SELECT count(*) FROM later) = 0;
        PERFORM pg_sleep(0.2);
    END LOOP;
END $$;
SELECT count(*) AS left_in_later FROM later;
SELECT evil.count_calls() AS planted_calls;
\c :regress_db
DROP DATABASE tscoll_ttl_later;
ALTER SYSTEM RESET tscoll.ttl_monitor_enabled;
ALTER SYSTEM RESET tscoll.ttl_monitor_sleep_secs;
ALTER SYSTEM RESET tscoll.ttl_batch_size;
SELECT pg_reload_conf();
