-- tscoll's own SQL resolves names in pg_catalog and tscoll only, never
-- through the caller's search_path (ENGINEERING: "Names tscoll
-- resolves"). A schema plants operators, functions, aggregates and domains
-- named like the built-ins; the same operations run under a clean path and
-- with that schema first, by a superuser and by an ordinary owner: no
-- planted object is called, and every result is the same.
\i test/setup.psql
\i test/hostile_objects.psql
CREATE TABLE public.sp_results (run text, step text, value jsonb);
GRANT INSERT ON public.sp_results TO PUBLIC;
SET client_min_messages = warning;
DROP ROLE IF EXISTS sp_owner;
RESET client_min_messages;
CREATE ROLE sp_owner;
GRANT CREATE ON SCHEMA public TO sp_owner;

\set run superuser_clean
\set coll public.sp_clean
\i test/search_path_workload.psql
SET search_path = evil, pg_catalog, public;
\set run superuser_hostile
\set coll public.sp_hostile
\i test/search_path_workload.psql
RESET search_path;
SELECT evil.count_calls() AS planted_calls;

SET ROLE sp_owner;
\set run owner_clean
\set coll public.sp_owner_clean
\i test/search_path_workload.psql
SET search_path = evil, pg_catalog, public;
\set run owner_hostile
\set coll public.sp_owner_hostile
\i test/search_path_workload.psql
RESET search_path;
RESET ROLE;
SELECT evil.count_calls() AS planted_calls;

-- The same results under either path.
SELECT c.step, c.run AS clean, h.run AS hostile, c.value = h.value AS same
  FROM sp_results c JOIN sp_results h
    ON h.step = c.step AND h.run = replace(c.run, 'clean', 'hostile')
 WHERE c.run LIKE '%clean'
 ORDER BY c.run, c.step;
SELECT run, step, value FROM sp_results WHERE run LIKE '%clean' ORDER BY run, step;
REVOKE CREATE ON SCHEMA public FROM sp_owner;
DROP ROLE sp_owner;
