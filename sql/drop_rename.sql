-- Dropping, renaming and moving collections keep the catalog right.
\i test/setup.psql

CREATE SCHEMA archive;
CREATE FUNCTION state() RETURNS TABLE (view text, bucket_table text, relations bigint)
    LANGUAGE sql AS $$
    SELECT c.view::text, c.bucket_table::text,
           (SELECT count(*) FROM pg_class r
             WHERE r.relnamespace IN (SELECT oid FROM pg_namespace
                                       WHERE nspname IN ('public', 'archive'))
               AND r.relkind IN ('r', 'v', 'i'))
      FROM tscoll.collections c ORDER BY 1 $$;

-- drop_collection removes view, bucket table and catalog row.
SELECT tscoll.create_collection('a', 't', 'm');
SELECT * FROM state();
SELECT tscoll.drop_collection('a');
SELECT * FROM state();
SELECT to_regclass('"system.buckets.a"');
SELECT try($$SELECT tscoll.drop_collection('a')$$);
CREATE TABLE not_a_collection (x int);
SELECT try($$SELECT tscoll.drop_collection('not_a_collection')$$);
DROP TABLE not_a_collection;

-- DROP VIEW does the same through the event trigger.
SELECT tscoll.create_collection('b', 't', 'm');
DROP VIEW b;
SELECT * FROM state();
SELECT to_regclass('"system.buckets.b"');
-- DROP TABLE of the bucket table needs CASCADE (the view depends on it),
-- and then takes the whole collection.
SELECT tscoll.create_collection('c', 't');
SELECT try($$DROP TABLE "system.buckets.c"$$);
DROP TABLE "system.buckets.c" CASCADE;
SELECT * FROM state();
-- DROP SCHEMA ... CASCADE.
SELECT tscoll.create_collection('archive.d', 't', 'm');
DROP SCHEMA archive CASCADE;
SELECT * FROM state();
CREATE SCHEMA archive;
-- A rolled-back drop leaves everything in place.
SELECT tscoll.create_collection('e', 't', 'm');
BEGIN;
DROP VIEW e;
ROLLBACK;
SELECT * FROM state();

-- ALTER VIEW ... RENAME renames the bucket table too.
ALTER VIEW e RENAME TO e2;
SELECT * FROM state();
SELECT name, options FROM tscoll.list_collections();
-- ALTER TABLE works on views as well.
ALTER TABLE e2 RENAME TO e3;
SELECT * FROM state();
-- ... SET SCHEMA moves the bucket table and its indexes.
ALTER VIEW e3 SET SCHEMA archive;
SELECT * FROM state();
SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'archive."system.buckets.e3"'::regclass ORDER BY 1::text;
ALTER VIEW archive.e3 SET SCHEMA public;
-- A new name too long for the bucket table is refused.
SELECT try(format('ALTER VIEW e3 RENAME TO %I', repeat('x', 49)));
SELECT * FROM state();
-- Renaming or moving the bucket table alone is refused.
SELECT try($$ALTER TABLE "system.buckets.e3" RENAME TO other$$);
SELECT try($$ALTER TABLE "system.buckets.e3" SET SCHEMA archive$$);
-- Renaming the view's columns is refused.
SELECT try($$ALTER VIEW e3 RENAME COLUMN m TO meta2$$);
SELECT try($$ALTER VIEW e3 RENAME COLUMN doc TO document$$);
-- Replacing the view with other columns is refused.
SELECT try($$CREATE OR REPLACE VIEW e3 AS SELECT now() AS t, NULL::jsonb AS m, NULL::jsonb AS doc, 1 AS extra$$);
SELECT * FROM state();
-- Changing the view's owner changes the bucket table's; the bucket table's
-- owner alone cannot be changed.
CREATE ROLE tscoll_regress_owner;
ALTER VIEW e3 OWNER TO tscoll_regress_owner;
SELECT relname, pg_get_userbyid(relowner) FROM pg_class
 WHERE oid IN ('e3'::regclass, '"system.buckets.e3"'::regclass) ORDER BY 1;
SELECT try($$ALTER TABLE "system.buckets.e3" OWNER TO CURRENT_USER$$);
ALTER VIEW e3 OWNER TO CURRENT_USER;
SELECT relname, pg_get_userbyid(relowner) = current_user FROM pg_class
 WHERE oid IN ('e3'::regclass, '"system.buckets.e3"'::regclass) ORDER BY 1;
DROP ROLE tscoll_regress_owner;
-- Other DDL on the bucket table is the owner's business.
CREATE INDEX ON "system.buckets.e3" (max_time);
SELECT tscoll.drop_collection('e3');
SELECT * FROM state();

-- DROP EXTENSION needs CASCADE while collections exist, and takes them.
SELECT tscoll.create_collection('f', 't', 'm');
SELECT try('DROP EXTENSION tscoll');
DROP EXTENSION tscoll CASCADE;
SELECT to_regclass('f'), to_regclass('"system.buckets.f"');
DROP SCHEMA archive CASCADE;
