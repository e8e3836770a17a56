-- The time merge (SPEC §5): a query ordering the view's rows by time reads
-- the buckets in min_time (max_time) order and merges their rows, rather
-- than sorting them all. The same rows in the same order as from a plain
-- table, with measurements out of order within buckets and across them.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT setseed(0.7);
SELECT tscoll.create_collection('tm', 't', 'm', bucket_max_span_seconds => 600,
                                bucket_rounding_seconds => 600);
-- 4,000 measurements over 12 hours on 10-second ticks (series share times),
-- in 5 series (one without meta); one in ten arrives 2 minutes late (out of
-- order within its bucket), one in twenty 30 minutes late (a bucket of its
-- own). i numbers them, so that (t, i) orders them exactly.
SET tscoll.bucket_max_count = 25;
INSERT INTO tm (t, m, doc)
SELECT t, m, doc FROM (
SELECT '2024-05-01'::timestamptz + ((random() * 4320)::int * 10) * interval '1 second' AS t,
       CASE WHEN i % 5 = 4 THEN NULL ELSE jsonb_build_object('s', i % 5) END AS m,
       jsonb_build_object('i', i, 'v', round((random() * 100)::numeric, 1)) AS doc
  FROM generate_series(1, 4000) i) AS measurements
 ORDER BY t + CASE WHEN random() < 0.1 THEN interval '2 minutes'
                   WHEN random() < 0.05 THEN interval '30 minutes' ELSE interval '0' END;
RESET tscoll.bucket_max_count;
SELECT count(*) AS buckets FROM "system.buckets.tm";
ANALYZE "system.buckets.tm";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE tm_plain AS SELECT t, m, doc FROM tm;
RESET tscoll.enable_bucket_pruning;

-- The rows of `query` on `rel`, in the order returned: count and hash.
CREATE FUNCTION in_order(rel text, query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    r record;
    n bigint := 0;
    hash text := '';
BEGIN
    FOR r IN EXECUTE format(query, rel) LOOP
        n := n + 1;
        hash := md5(hash || r::text);
    END LOOP;
    RETURN n || '/' || hash;
END
$$;
CREATE FUNCTION same_order(query text) RETURNS boolean LANGUAGE sql AS
$$ SELECT in_order('tm', query) = in_order('tm_plain', query) $$;

-- What EXPLAIN shows; off, the Sort.
EXPLAIN (COSTS OFF) SELECT t, m->>'s' AS s FROM tm
 WHERE t >= '2024-05-01 03:00' AND t < '2024-05-01 04:00' ORDER BY t, s;
EXPLAIN (COSTS OFF) SELECT t FROM tm ORDER BY t DESC LIMIT 3 OFFSET 2;
SET tscoll.enable_time_merge = off;
EXPLAIN (COSTS OFF) SELECT t, m->>'s' AS s FROM tm
 WHERE t >= '2024-05-01 03:00' AND t < '2024-05-01 04:00' ORDER BY t, s;
RESET tscoll.enable_time_merge;

-- Whole documents, fields, meta, both directions, LIMIT and OFFSET.
SELECT q, same_order(q) AS same
  FROM (VALUES ($$SELECT t, m, doc FROM %s ORDER BY t, (doc->>'i')::int$$),
               ($$SELECT t, m, doc FROM %s ORDER BY t DESC, (doc->>'i')::int DESC$$),
               ($$SELECT t FROM %s ORDER BY t$$),
               ($$SELECT t FROM %s ORDER BY t DESC$$),
               ($$SELECT t, m->>'s' AS s, (doc->>'i')::int AS i FROM %s
                  WHERE t >= '2024-05-01 03:00' AND t < '2024-05-01 09:00'
                  ORDER BY t, s NULLS FIRST, i$$),
               ($$SELECT t, (doc->>'v')::float8 AS v, (doc->>'i')::int AS i FROM %s
                  WHERE (doc->>'v')::float8 > 90 ORDER BY t DESC, i LIMIT 40$$),
               ($$SELECT t, (doc->>'i')::int AS i FROM %s ORDER BY t, i LIMIT 7 OFFSET 30$$),
               ($$SELECT t, doc FROM %s WHERE m->>'s' = '2' ORDER BY t DESC, doc->>'i' LIMIT 5$$),
               ($$SELECT t, doc FROM %s WHERE m IS NULL ORDER BY t, doc->>'i' LIMIT 50$$))
       AS queries(q);

-- Random windows, directions and limits.
SELECT count(*) AS tried, count(*) FILTER (WHERE NOT same_order(q)) AS differ
  FROM (SELECT format($$SELECT t, m, (doc->>'i')::int AS i FROM %%s
                        WHERE t >= %L AND t < %L ORDER BY t %s, i %s %s$$,
                      lo, lo + (random() * 240)::int * interval '1 minute', dir, dir,
                      CASE WHEN random() < 0.5 THEN 'LIMIT ' || (1 + (random() * 30)::int)
                           ELSE '' END) AS q
          FROM (SELECT '2024-05-01'::timestamptz + (random() * 720)::int * interval '1 minute' AS lo,
                       CASE WHEN random() < 0.5 THEN 'ASC' ELSE 'DESC' END AS dir
                  FROM generate_series(1, 60)) AS draws) AS queries;

-- Rescanned under a loop: the merge starts again for each outer row.
SELECT same_order($$SELECT g, x.t, x.i FROM generate_series(0, 5) g,
                    LATERAL (SELECT t, (doc->>'i')::int AS i FROM %s
                              WHERE t >= '2024-05-01'::timestamptz + g * interval '2 hours'
                              ORDER BY t, i LIMIT 4) x ORDER BY g$$) AS rescanned;

-- In a parallel worker.
SET force_parallel_mode = on;
SELECT same_order($$SELECT t, (doc->>'i')::int AS i FROM %s ORDER BY t DESC, i LIMIT 100$$)
       AS in_worker;
RESET force_parallel_mode;

-- Over a parallel bucket scan with a LIMIT, every participant reads all the
-- buckets in the same order (bound, then _id) and claims them in turn: a
-- LIMIT over all the rows shows each bucket read once, by one of them.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT t, (doc->>'i')::int AS i FROM tm ORDER BY t, i LIMIT 5000;
CREATE TEMP TABLE merged AS
SELECT row_number() OVER () AS n, x.*
  FROM (SELECT t, (doc->>'i')::int AS i FROM tm ORDER BY t, i LIMIT 5000) x;
CREATE TEMP TABLE merged_desc AS
SELECT row_number() OVER () AS n, x.*
  FROM (SELECT t, m, doc FROM tm WHERE t >= '2024-05-01 02:00'
         ORDER BY t DESC, (doc->>'i')::int LIMIT 300 OFFSET 20) x;
-- Without a LIMIT, the Gather Merge of Sorts becomes the merge in one
-- process (the Gather Merge's InitPlan moves to it).
EXPLAIN (COSTS OFF) SELECT t, (doc->>'i')::int AS i FROM tm
 WHERE t >= (SELECT max(t) FROM tm_plain) - interval '3 hours' ORDER BY t, i;
CREATE TEMP TABLE merged_all AS
SELECT row_number() OVER () AS n, x.*
  FROM (SELECT t, (doc->>'i')::int AS i FROM tm
         WHERE t >= (SELECT max(t) FROM tm_plain) - interval '3 hours' ORDER BY t, i) x;
-- Its columns keep their names, which clients read.
SELECT t, (doc->>'i')::int AS i FROM tm
 WHERE t >= (SELECT max(t) FROM tm_plain) + interval '1 day' ORDER BY t, i;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE x IS DISTINCT FROM y) AS differ
  FROM merged_all x
  FULL JOIN (SELECT row_number() OVER () AS n, p.*
               FROM (SELECT t, (doc->>'i')::int AS i FROM tm_plain
                      WHERE t >= (SELECT max(t) FROM tm_plain) - interval '3 hours'
                      ORDER BY t, i) p) y
       USING (n);
SELECT count(*) AS rows,
       count(*) FILTER (WHERE x IS DISTINCT FROM y) AS differ
  FROM merged x
  FULL JOIN (SELECT row_number() OVER () AS n, p.*
               FROM (SELECT t, (doc->>'i')::int AS i FROM tm_plain ORDER BY t, i) p) y
       USING (n);
SELECT count(*) AS rows,
       count(*) FILTER (WHERE x IS DISTINCT FROM y) AS differ
  FROM merged_desc x
  FULL JOIN (SELECT row_number() OVER () AS n, p.*
               FROM (SELECT t, m, doc FROM tm_plain WHERE t >= '2024-05-01 02:00'
                      ORDER BY t DESC, (doc->>'i')::int LIMIT 300 OFFSET 20) p) y
       USING (n);

-- Many buckets sharing a bound keep their rows until the next bound: past
-- work_mem, the rest of the rows are sorted (and spill to disk) instead.
SELECT tscoll.create_collection('wide_start', 't', 'm');
INSERT INTO wide_start (t, m, doc)
SELECT '2024-06-01'::timestamptz + (j * 7 % 20) * interval '1 second', jsonb_build_object('s', s),
       jsonb_build_object('i', s * 100 + j, 'pad', repeat('x', 200))
  FROM generate_series(1, 150) s, generate_series(1, 20) j;
SELECT count(*) AS buckets, count(DISTINCT min_time) AS bounds FROM "system.buckets.wide_start";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE wide_start_plain AS SELECT t, m, doc FROM wide_start;
RESET tscoll.enable_bucket_pruning;
SET work_mem = '64kB';
CREATE FUNCTION merge_explained(query text, wanted text DEFAULT 'TscollTimeMerge|Past work_mem')
    RETURNS SETOF text LANGUAGE plpgsql AS
$$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
        IF line ~ wanted THEN
            RETURN NEXT regexp_replace(line, '\(actual.*\)', '');
        END IF;
    END LOOP;
END
$$;
SELECT merge_explained($$SELECT t, doc FROM wide_start ORDER BY t, (doc->>'i')::int$$);
SELECT q, in_order('wide_start', q) = in_order('wide_start_plain', q) AS same
  FROM (VALUES ($$SELECT t, m, doc FROM %s ORDER BY t, (doc->>'i')::int$$),
               ($$SELECT t, doc FROM %s ORDER BY t DESC, (doc->>'i')::int LIMIT 2000$$))
       AS queries(q);
RESET work_mem;

-- The rows kept take what their values take: copies packed in blocks (a
-- 650-byte document in 656 bytes, where palloc alone takes 1 KB), and a
-- bucket row's column (SELECT *'s meta) kept once per run. These 3,000
-- rows share one bound and fit 3 MB (palloc'd one by one, they did not,
-- and went to disk). Then 40 series over 3 hours: the blocks of an
-- hour's rows are given back as they are returned, while the next hour's
-- buckets are read.
SELECT tscoll.create_collection('wide_docs', 't', 'm');
INSERT INTO wide_docs (t, m, doc)
SELECT '2024-06-01'::timestamptz + j * interval '1 second',
       jsonb_build_object('s', s, 'pad', repeat('m', 300)),
       jsonb_build_object('i', s * 100 + j, 'pad', repeat('x', 200))
  FROM generate_series(1, 150) s, generate_series(1, 20) j;
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE wide_docs_plain AS SELECT t, m, doc FROM wide_docs;
RESET tscoll.enable_bucket_pruning;
SET work_mem = '3MB';
SELECT merge_explained($$SELECT * FROM wide_docs ORDER BY t, (doc->>'i')::int$$);
SELECT in_order('wide_docs', q) = in_order('wide_docs_plain', q) AS same
  FROM (VALUES ($$SELECT t, m, doc FROM %s ORDER BY t, (doc->>'i')::int$$)) AS queries(q);
RESET work_mem;
SELECT tscoll.create_collection('hours_docs', 't', 'm', 'seconds');
INSERT INTO hours_docs (t, m, doc)
SELECT '2024-06-01'::timestamptz + j * interval '3 minutes', jsonb_build_object('s', s),
       jsonb_build_object('i', s * 1000 + j, 'pad', repeat('x', 300))
  FROM generate_series(1, 40) s, generate_series(0, 59) j;
SELECT count(*) AS buckets, count(DISTINCT min_time) AS bounds FROM "system.buckets.hours_docs";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE hours_docs_plain AS SELECT t, m, doc FROM hours_docs;
RESET tscoll.enable_bucket_pruning;
SELECT merge_explained($$SELECT * FROM hours_docs ORDER BY t, m->>'s'$$);
SELECT q, in_order('hours_docs', q) = in_order('hours_docs_plain', q) AS same
  FROM (VALUES ($$SELECT t, m, doc FROM %s ORDER BY t, m->>'s'$$),
               ($$SELECT t, m, doc FROM %s ORDER BY t DESC, m->>'s' DESC$$))
       AS queries(q);

-- Rows whose times tie are ordered by their series (keys of the bucket
-- row, here meta): each run gets its series' rank, kept among the series of
-- the runs kept. Series arriving in the Sort's reverse order take every
-- rank before the first (so ranks are spread again); past 1,024 series the
-- others are compared by value.
SELECT tscoll.create_collection('many_series', 't', 'm');
INSERT INTO many_series (t, m, doc)
SELECT '2024-07-01'::timestamptz + j * interval '10 seconds',
       jsonb_build_object('s', 'series ' || lpad(s::text, 5, '0'), 'g', s % 3),
       jsonb_build_object('i', s * 10 + j)
  FROM generate_series(1, 1100) s, generate_series(0, 2) j
 ORDER BY s, j;
SELECT count(*) AS buckets, count(DISTINCT min_time) AS bounds FROM "system.buckets.many_series";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE many_series_plain AS SELECT t, m, doc FROM many_series;
RESET tscoll.enable_bucket_pruning;
SELECT q, in_order('many_series', q) = in_order('many_series_plain', q) AS same
  FROM (VALUES ($$SELECT t, m->>'s' AS s, doc FROM %s ORDER BY t, s$$),
               ($$SELECT t, m->>'s' AS s, doc FROM %s ORDER BY t, s DESC$$),
               ($$SELECT t, m->>'s' AS s FROM %s WHERE m->>'s' < 'series 00040'
                  ORDER BY t DESC, s DESC$$),
               ($$SELECT t, (m->>'g')::int AS g, (doc->>'i')::int AS i FROM %s
                  ORDER BY t, g DESC, i$$),
               ($$SELECT t, m->'g' AS g, m->>'s' AS s FROM %s ORDER BY t, g, s DESC LIMIT 700$$))
       AS queries(q);
EXPLAIN (COSTS OFF) SELECT t, m->>'s' AS s, doc FROM many_series ORDER BY t, s;

-- Under a LIMIT, an unpack scan returns only each bucket's first count +
-- offset measurements by time and those tied with the last of them (the
-- merge returns no other), unless a condition drops rows after the scan:
-- then any may be needed. Here 40 measurements of one series at 4 times,
-- out of order: each of the first three is earlier than the bucket open
-- before it, so opens a bucket of its own; the other 37 share the fourth.
SELECT tscoll.create_collection('ties', 't', 'm');
INSERT INTO ties (t, m, doc)
SELECT '2024-08-01'::timestamptz + (i * 7 % 4) * interval '1 minute', '{"s": 1}',
       jsonb_build_object('i', i, 'odd', i % 2 = 1)
  FROM generate_series(1, 40) i;
SELECT count(*) AS buckets FROM "system.buckets.ties";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE ties_plain AS SELECT t, m, doc FROM ties;
RESET tscoll.enable_bucket_pruning;
EXPLAIN (COSTS OFF) SELECT t, doc FROM ties ORDER BY t, (doc->>'i')::int LIMIT 12;
EXPLAIN (COSTS OFF) SELECT t, doc FROM ties WHERE doc->>'odd' = 'true'
 ORDER BY t DESC, (doc->>'i')::int LIMIT 3;
SELECT q, in_order('ties', q) = in_order('ties_plain', q) AS same
  FROM (VALUES ($$SELECT t, doc FROM %s ORDER BY t, (doc->>'i')::int LIMIT 12$$),
               ($$SELECT t, doc FROM %s ORDER BY t DESC, (doc->>'i')::int DESC LIMIT 3 OFFSET 9$$),
               ($$SELECT t, (doc->>'i')::int AS i FROM %s ORDER BY t, i LIMIT 1$$),
               ($$SELECT t, doc FROM %s WHERE doc->>'odd' = 'true'
                  ORDER BY t DESC, (doc->>'i')::int LIMIT 3$$),
               ($$SELECT t, doc FROM %s WHERE t > '2024-08-01 00:01'
                  ORDER BY t, (doc->>'i')::int LIMIT 11$$))
       AS queries(q);
SELECT t, (doc->>'i')::int AS i FROM ties ORDER BY t, i LIMIT 12;

-- With the time as the Sort's only key, a row at the bound of the bucket
-- read last may go: no row to come is later, and ties are in no order. So
-- the latest row of each series comes from its latest bucket alone
-- (Buckets: read=4 for 4 series), and every LIMIT returns the times the
-- plain table's does.
SELECT merge_explained($$
SELECT v.s, l.t FROM (VALUES ('0'), ('1'), ('2'), ('3')) AS v(s),
       LATERAL (SELECT t FROM tm WHERE m->>'s' = v.s ORDER BY t DESC LIMIT 1) l$$,
                       'TscollTimeMerge|Buckets:');
SELECT v.s, l.t FROM (VALUES ('0'), ('1'), ('2'), ('3')) AS v(s),
       LATERAL (SELECT t FROM tm WHERE m->>'s' = v.s ORDER BY t DESC LIMIT 1) l
EXCEPT ALL
SELECT v.s, l.t FROM (VALUES ('0'), ('1'), ('2'), ('3')) AS v(s),
       LATERAL (SELECT t FROM tm_plain WHERE m->>'s' = v.s ORDER BY t DESC LIMIT 1) l;
SELECT k, d,
       (SELECT array_agg(t) FROM (SELECT t FROM tm WHERE m->>'s' = '2' ORDER BY t DESC LIMIT k) x)
     = (SELECT array_agg(t) FROM (SELECT t FROM tm_plain WHERE m->>'s' = '2' ORDER BY t DESC LIMIT k) x)
       AS same_desc,
       (SELECT array_agg(t) FROM (SELECT t FROM tm ORDER BY t LIMIT k OFFSET d) x)
     = (SELECT array_agg(t) FROM (SELECT t FROM tm_plain ORDER BY t LIMIT k OFFSET d) x)
       AS same_asc
  FROM (VALUES (1, 0), (2, 0), (7, 3), (60, 10)) AS limits(k, d);
