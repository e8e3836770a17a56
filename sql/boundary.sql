-- The C++ <-> PostgreSQL error boundary (src/pg/guard.hpp): C++ exceptions
-- become SQL errors with the right SQLSTATE, and PostgreSQL errors raised
-- under live C++ frames unwind them without leaks or crashes.
\i test/setup.psql

-- Test-only entry points of the library; not part of the SQL API.
CREATE FUNCTION probe_throw(kind text, depth int) RETURNS void
    AS '$libdir/tscoll_probes', 'tscoll_probe_throw' LANGUAGE C STRICT;
CREATE FUNCTION probe_pg_error(input text, depth int) RETURNS bigint
    AS '$libdir/tscoll_probes', 'tscoll_probe_pg_error' LANGUAGE C STRICT;

-- Runs a statement; returns its SQLSTATE and messages, or 'ok'.
CREATE FUNCTION try_detailed(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
    hint text;
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    RETURN SQLSTATE || ': ' || SQLERRM
        || coalesce(' / DETAIL: ' || nullif(detail, ''), '')
        || coalesce(' / HINT: ' || nullif(hint, ''), '');
END $$;

-- A core error 50 frames down: its class decides the SQLSTATE (22023), and
-- its detail and hint survive.
SELECT try_detailed('SELECT probe_throw(''core'', 50)');
-- std::bad_alloc is out of memory (53200); any other std::exception is an
-- internal error (XX000).
SELECT try_detailed('SELECT probe_throw(''bad_alloc'', 50)');
SELECT try_detailed('SELECT probe_throw(''std'', 50)');
-- A PostgreSQL error under 50 C++ frames comes out unchanged (22P02).
SELECT try_detailed('SELECT probe_pg_error(''not a number'', 50)');
-- Without an error the frames return normally: 51 frames of 4096 bytes + 7.
SELECT probe_pg_error('7', 50);
-- The same errors at top level, as a client sees them.
SELECT probe_throw('core', 3);
SELECT probe_pg_error('x', 3);

-- 10,000 failures, half of each kind, must not grow the backend: each call
-- holds 51 frames x 4 KiB of C++ heap memory, and a PostgreSQL error that
-- skipped their destructors would leak ~1 GB over the loop (checked by
-- calling int4in without pg_call) besides a copied ErrorData.
CREATE FUNCTION rss_kb() RETURNS bigint LANGUAGE sql AS $$
    SELECT substring(line FROM '\d+')::bigint
      FROM regexp_split_to_table(pg_read_file('/proc/self/status'), E'\n') line
     WHERE line LIKE 'VmRSS:%' $$;
CREATE FUNCTION fail_many(n int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    failures int := 0;
BEGIN
    FOR i IN 1..n LOOP
        BEGIN
            IF i % 2 = 0 THEN
                PERFORM probe_pg_error('bad', 50);
            ELSE
                PERFORM probe_throw('core', 50);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            failures := failures + 1;
        END;
    END LOOP;
    RETURN failures;
END $$;
SELECT fail_many(1000);  -- warm up caches and allocator
CREATE TEMP TABLE rss AS SELECT rss_kb() AS before;
SELECT fail_many(10000);
SELECT CASE WHEN rss_kb() - before < 2048 THEN 'backend memory did not grow'
            ELSE format('backend grew by %s kB', rss_kb() - before) END AS memory
  FROM rss;
-- The backend is still healthy.
SELECT 1 AS alive;
