-- Queries on the view (SPEC §5): bucket pruning on time and on measurement
-- fields, lazy unpacking, and tscoll.enable_bucket_pruning. Random
-- predicates give the same rows with pruning on, with it off, and from a
-- plain table holding the same measurements.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT setseed(0.42);
SELECT tscoll.create_collection('p', 't', 'm', bucket_max_span_seconds => 600,
                                bucket_rounding_seconds => 600);
-- The plans below are those of the bucket table as its writes leave it:
-- a VACUUM would set its visibility map, and some scans would turn into
-- index-only scans.
ALTER TABLE "system.buckets.p" SET (autovacuum_enabled = off);
-- 3,000 measurements over two days in 6 series (one without meta, one
-- whose s is a string), one in
-- ten out of order, buckets of at most 20. v is mostly a float, sometimes an
-- integer, a numeric string, null or missing; w an integer or an integer
-- string.
SET tscoll.bucket_max_count = 20;
INSERT INTO p (t, m, doc)
SELECT t, m, doc FROM (
SELECT '2024-03-01'::timestamptz + (random() * 172800)::int * interval '1 second' AS t,
       CASE WHEN i % 6 = 5 THEN NULL WHEN i % 6 = 4 THEN '{"s": "4"}'
            ELSE jsonb_build_object('s', i % 6) END AS m,
       jsonb_strip_nulls(jsonb_build_object(
           'v', CASE WHEN i % 50 = 0 THEN to_jsonb('12.5'::text)
                     WHEN i % 37 = 0 THEN 'null'::jsonb
                     WHEN i % 41 = 0 THEN NULL
                     WHEN i % 7 = 0 THEN to_jsonb((random() * 100)::int)
                     ELSE to_jsonb(round((random() * 100)::numeric, 2)) END,
           'w', CASE WHEN i % 90 = 0 THEN to_jsonb('77'::text) ELSE to_jsonb(i % 100) END,
           's', 'x' || (i % 4))) AS doc
  FROM generate_series(1, 3000) i) AS measurements
 ORDER BY t + CASE WHEN random() < 0.1 THEN interval '-1 hour' ELSE interval '0' END;
RESET tscoll.bucket_max_count;
SELECT count(*) AS buckets FROM "system.buckets.p";
-- An index on a meta subfield serves meta->>'s' = '...' conditions.
SELECT tscoll.create_index('p', '{"m.s": 1, "t": 1}');
ANALYZE "system.buckets.p";

-- The same measurements in a plain table, read with pruning off.
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE plain AS SELECT t, m, doc FROM p;
RESET tscoll.enable_bucket_pruning;
SELECT count(*) FROM plain;

-- count and a hash of what the query reads, with `predicate` on `rel`.
CREATE FUNCTION digest(rel text, predicate text, pruning boolean) RETURNS text
    LANGUAGE plpgsql AS
$$
DECLARE
    result text;
BEGIN
    PERFORM set_config('tscoll.enable_bucket_pruning', pruning::text, true);
    EXECUTE format($q$SELECT count(*) || '/' || coalesce(sum(hashtext(concat_ws('|', t, m,
                              doc->>'v', doc->'w', doc->>'s')))::text, '-') FROM %s WHERE %s$q$,
                   rel, predicate) INTO result;
    RETURN result;
END
$$;

CREATE FUNCTION random_time() RETURNS text LANGUAGE sql AS
$$ SELECT quote_literal('2024-03-01'::timestamptz - interval '1 hour'
                       + (random() * 180000)::int * interval '1 second') $$;

-- The time of one of the measurements.
CREATE FUNCTION some_time() RETURNS text LANGUAGE sql AS
$$ SELECT quote_literal((SELECT t FROM plain ORDER BY random() LIMIT 1)) $$;

-- A random condition: time, meta or field comparisons, and AND/OR of them.
CREATE FUNCTION random_condition(depth int) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    ops text[] := ARRAY['<', '<=', '=', '>=', '>'];
    op text := ops[1 + floor(random() * 5)::int];
    r float8 := random();
BEGIN
    IF depth > 0 AND r < 0.3 THEN
        RETURN '(' || random_condition(depth - 1)
               || CASE WHEN random() < 0.5 THEN ' AND ' ELSE ' OR ' END
               || random_condition(depth - 1) || ')';
    ELSIF r < 0.45 THEN
        RETURN 't ' || op || ' ' || random_time();
    ELSIF r < 0.49 THEN
        RETURN 't = ' || some_time();
    ELSIF r < 0.52 THEN
        RETURN 't BETWEEN ' || random_time() || ' AND ' || random_time();
    ELSIF r < 0.54 THEN
        RETURN format('t IN (%s, %s, %s)', some_time(), random_time(), some_time());
    ELSIF r < 0.55 THEN
        RETURN format('t = ANY (ARRAY[%s, %s]::timestamptz[])', some_time(), some_time());
    ELSIF r < 0.56 THEN
        -- an array known only when the query runs
        RETURN format('t = ANY (array_append(ARRAY[%s::timestamptz], %s))', some_time(), some_time());
    ELSIF r < 0.65 THEN
        RETURN CASE WHEN random() < 0.15 THEN 'm IS NULL'
                    WHEN random() < 0.3 THEN format('m = ''{"s": %s}''', (random() * 4)::int)
                    WHEN random() < 0.5 THEN format('m @> ''{"s": %s}''', (random() * 4)::int)
                    WHEN random() < 0.6 THEN format('m->>''s'' IN (''%s'', ''%s'')',
                                                    (random() * 5)::int, (random() * 5)::int)
                    ELSE format('m->>''s'' = ''%s''', (random() * 5)::int) END;
    ELSIF r < 0.75 THEN
        RETURN format('(doc->>''v'')::float8 %s %s', op, round((random() * 110 - 5)::numeric, 2));
    ELSIF r < 0.8 THEN
        RETURN format('(doc->>''v'')::numeric %s %s', op, round((random() * 110 - 5)::numeric, 2));
    ELSIF r < 0.9 THEN
        RETURN format('(doc->>''w'')::int %s %s', op, (random() * 110)::int - 5);
    ELSE
        RETURN format('doc->''v'' %s ''%s''', op, round((random() * 110 - 5)::numeric, 1));
    END IF;
END
$$;

CREATE TABLE tried (predicate text, pruned text, unpruned text, expected text);
DO $$
DECLARE
    predicate text;
BEGIN
    FOR i IN 1..400 LOOP
        predicate := random_condition(2);
        INSERT INTO tried VALUES (predicate, digest('p', predicate, true),
                                  digest('p', predicate, false), digest('plain', predicate, false));
    END LOOP;
END
$$;
SELECT count(*) AS predicates,
       count(*) FILTER (WHERE expected NOT LIKE '0/%') AS matching_some,
       count(*) FILTER (WHERE pruned <> expected OR unpruned <> expected) AS wrong
  FROM tried;
SELECT * FROM tried WHERE pruned <> expected OR unpruned <> expected LIMIT 5;

-- Arrays past the 100 elements that become one condition each, with NULLs
-- before and after: the same rows as the plain table.
CREATE TABLE array_tried AS
SELECT predicate, digest('p', predicate, true) AS pruned, digest('plain', predicate, false) AS expected
  FROM (SELECT format('t = ANY (%L::timestamptz[])', array_agg(x ORDER BY i)) AS predicate
          FROM (SELECT nulls, i, CASE WHEN i <= nulls THEN NULL ELSE t END AS x
                  FROM (SELECT row_number() OVER (ORDER BY t) AS i, t FROM plain) r,
                       (VALUES (1), (101), (150)) AS v(nulls)
                 WHERE i <= 160 AND (i > 100 OR i % 7 = 0 OR i <= nulls)) q
         GROUP BY nulls) a;
SELECT count(*) AS predicates, count(*) FILTER (WHERE expected NOT LIKE '0/%') AS matching_some,
       count(*) FILTER (WHERE pruned <> expected) AS wrong
  FROM array_tried;

-- The view on the nullable side of a LEFT JOIN, with an OR whose meta arm
-- is not strict: pruning must not turn rows of pruned buckets into the
-- NULLs that the IS NULL arm lets through.
CREATE TABLE series_wanted AS SELECT * FROM (VALUES ('1'), ('2'), ('7')) AS v(s);
CREATE FUNCTION left_join_digest(pruning boolean, rel text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    result text;
BEGIN
    PERFORM set_config('tscoll.enable_bucket_pruning', pruning::text, true);
    EXECUTE format($q$SELECT count(*) || '/' || coalesce(sum(hashtext(concat_ws('|', w.s, v.t))), 0)
                        FROM series_wanted w LEFT JOIN %s v ON v.m->>'s' = w.s
                       WHERE v.m IS NULL OR v.t > '2024-03-05 00:00'
                          OR (v.t < '2024-03-01 01:00' AND v.m @> '{"s": 2}')$q$, rel)
      INTO result;
    RETURN result;
END
$$;
SELECT left_join_digest(true, 'p') = left_join_digest(false, 'plain') AS same_pruned,
       left_join_digest(false, 'p') = left_join_digest(false, 'plain') AS same_unpruned;

-- Pruning reads fewer buckets: time, field and meta conditions.
-- The nodes of a query's EXPLAIN ANALYZE plan, pruning on or off.
CREATE FUNCTION plan_nodes(query text, pruning boolean) RETURNS SETOF json LANGUAGE plpgsql AS
$$
DECLARE
    plan json;
BEGIN
    PERFORM set_config('tscoll.enable_bucket_pruning', pruning::text, true);
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || query INTO plan;
    RETURN QUERY WITH RECURSIVE nodes(n) AS (
                     SELECT plan->0->'Plan'
                     UNION ALL
                     SELECT c FROM nodes, json_array_elements(n->'Plans') c)
                 SELECT n FROM nodes;
END
$$;
CREATE FUNCTION buckets_read(query text, pruning boolean) RETURNS int LANGUAGE sql AS
$$
SELECT sum((n->>'Actual Rows')::int)::int FROM plan_nodes(query, pruning) n
 WHERE n->>'Relation Name' = 'system.buckets.p'
$$;
SELECT q, buckets_read(q, true) AS pruned, buckets_read(q, false) AS unpruned
  FROM (VALUES ($$SELECT count(*) FROM p WHERE t >= '2024-03-02 10:00' AND t < '2024-03-02 11:00'$$),
               ($$SELECT count(*) FROM p WHERE t < '2024-03-01 01:00' OR t > '2024-03-02 23:00'$$),
               ($$SELECT count(*) FROM p WHERE (doc->>'v')::float8 > 99.5$$),
               ($$SELECT count(*) FROM p WHERE m->>'s' = '3'$$),
               ($$SELECT count(*) FROM p WHERE t IN ('2024-03-01 10:00', '2024-03-02 10:00')$$),
               ($$SELECT count(*) FROM p WHERE (t < '2024-03-01 02:00' AND m = '{"s": 1}')
                                           OR (t > '2024-03-02 22:00' AND m @> '{"s": 2}')$$),
               -- its time conditions alone: what it read before meta within an OR pruned
               ($$SELECT count(*) FROM p WHERE t < '2024-03-01 02:00' OR t > '2024-03-02 22:00'$$))
       AS queries(q);
RESET tscoll.enable_bucket_pruning;

-- EXPLAIN ANALYZE of the unpack scan counts the buckets it read, which the
-- bucket scan returned, and those of the table it did not read (pruned).
CREATE FUNCTION unpack_counts(query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || query INTO plan;
    RETURN (WITH RECURSIVE nodes(n) AS (
                SELECT plan->0->'Plan'
                UNION ALL
                SELECT c FROM nodes, json_array_elements(n->'Plans') c)
            SELECT string_agg(format('read=%s pruned=%s', n->>'Buckets Read',
                                     n->>'Buckets Pruned'), '; ')
              FROM nodes WHERE n->>'Custom Plan Provider' = 'TscollUnpack');
END
$$;
SELECT (SELECT count(*) FROM "system.buckets.p") AS buckets;
SELECT q, buckets_read(q, true) AS bucket_rows, unpack_counts(q)
  FROM (VALUES ($$SELECT count(*) FROM p WHERE t >= '2024-03-02 10:00' AND t < '2024-03-02 11:00'$$),
               ($$SELECT max((doc->>'v')::float8) FROM p WHERE (doc->>'v')::float8 > 99.5$$),
               ($$SELECT t, doc FROM p WHERE m->>'s' = '3'$$),
               ($$SELECT count(*) FROM p$$)) AS queries(q);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t, (doc->>'v')::float8 FROM p
 WHERE t >= '2024-03-02 10:00' AND t < '2024-03-02 11:00' AND (doc->>'v')::float8 > 90;
-- In a parallel worker: the same rows, and the worker's buckets counted.
SET force_parallel_mode = on;
SELECT count(*), sum((doc->>'v')::float8), count(doc), min(t), max(t) FROM p
 WHERE t >= '2024-03-01 10:00' AND t < '2024-03-02 11:00' AND (doc->>'v')::float8 > 20;
SELECT unpack_counts($$SELECT count(*), sum((doc->>'v')::float8) FROM p WHERE m->>'s' = '3'$$);
RESET force_parallel_mode;
SELECT count(*), sum((doc->>'v')::float8), count(doc), min(t), max(t) FROM p
 WHERE t >= '2024-03-01 10:00' AND t < '2024-03-02 11:00' AND (doc->>'v')::float8 > 20;

-- A time condition in an inner join's ON clause prunes as in the WHERE.
-- A time compared with another relation's column (a join value) gets its
-- bucket condition where the comparison stands, through columns of the
-- bucket row added to the view: each joined row unpacks only the buckets
-- that can hold its time. The rows are the plain table's, in inner, left
-- and right joins, with =, < and >, beside a whole-row reference (which
-- keeps the view's columns as they are), and with pruning off.
CREATE TABLE moments AS
SELECT * FROM (VALUES ('1', '2024-03-01 10:00'::timestamptz, '2024-03-01 11:00'::timestamptz),
                      ('2', '2024-03-02 05:30', '2024-03-02 05:45'),
                      ('4', '2024-03-02 23:50', '2024-03-04 00:00'),
                      ('9', '2024-02-01 00:00', '2024-02-02 00:00')) AS v(s, since, until);
CREATE TABLE latest AS SELECT m->>'s' AS s, max(t) AS t FROM plain GROUP BY 1;
-- How many buckets the query unpacks (the unpack scan's loops).
CREATE FUNCTION unpacked(query text, pruning boolean) RETURNS bigint LANGUAGE sql AS
$$
SELECT sum((n->>'Actual Loops')::bigint) FROM plan_nodes(query, pruning) n
 WHERE n->>'Custom Plan Provider' = 'TscollUnpack' OR n->>'Function Name' LIKE '\_unpack%'
$$;
SELECT q, unpacked(format(q, 'p'), true) AS pruned, unpacked(format(q, 'p'), false) AS unpruned,
       digest(format('(%s) q', format(q, 'p')), 'true', true)
       = digest(format('(%s) q', format(q, 'plain')), 'true', false) AS same,
       digest(format('(%s) q', format(q, 'p')), 'true', false)
       = digest(format('(%s) q', format(q, 'plain')), 'true', false) AS same_unpruned
  FROM (VALUES ($$SELECT c.* FROM %s c JOIN moments w ON c.m->>'s' = w.s AND c.t > '2024-03-02 22:00'$$),
               ($$SELECT c.* FROM %s c JOIN latest l ON c.m->>'s' = l.s AND c.t = l.t$$),
               ($$SELECT c.* FROM latest l, %s c WHERE c.t = l.t$$),
               ($$SELECT c.* FROM %s c JOIN moments w ON c.m->>'s' = w.s
                                    AND c.t >= w.since AND c.t < w.until$$),
               ($$SELECT c.t, c.m, c.doc FROM moments w LEFT JOIN %s c
                                    ON c.t >= w.since AND c.t < w.until$$),
               ($$SELECT c.t, c.m, c.doc FROM %s c RIGHT JOIN moments w
                                    ON c.t >= w.since AND c.t < w.until AND c.m->>'s' = w.s$$),
               ($$SELECT c.t, c.m, c.doc, c::text AS whole FROM %s c JOIN latest l ON c.t = l.t$$),
               -- merge-joinable only, as a FULL JOIN needs: no condition added
               ($$SELECT c.t, c.m, c.doc FROM %s c FULL JOIN moments w ON c.t = w.since::date$$))
       AS queries(q);
-- The view's added columns go to EXPLAIN VERBOSE as the bucket row's.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT c.t FROM p c JOIN latest l ON c.m->>'s' = l.s AND c.t = l.t;

-- A scrollable cursor, and statements that write or lock, keep PostgreSQL's
-- Function Scan: the unpack scan reads forward only and keeps no row to
-- recheck after a concurrent update.
BEGIN;
DECLARE back SCROLL CURSOR FOR
    SELECT t, doc->>'s' AS s FROM p WHERE m->>'s' = '1' ORDER BY t DESC LIMIT 3;
FETCH ALL FROM back;
FETCH BACKWARD 2 FROM back;
COMMIT;
CREATE TABLE marks (t timestamptz, seen boolean);
INSERT INTO marks SELECT t, false FROM plain ORDER BY t LIMIT 3;
EXPLAIN (COSTS OFF) UPDATE marks SET seen = true FROM p WHERE p.t = marks.t;
UPDATE marks SET seen = true FROM p WHERE p.t = marks.t;
SELECT count(*) FILTER (WHERE seen) AS seen FROM marks;
DROP TABLE marks;

-- What EXPLAIN shows: the bucket conditions, widened by the span (10 min).
EXPLAIN (COSTS OFF)
SELECT t, (doc->>'v')::float8 FROM p
 WHERE t >= '2024-03-02 10:00' AND t < '2024-03-02 11:00' AND (doc->>'v')::float8 > 90;
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE t = '2024-03-02 10:00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE m->>'s' = '3' AND t < '2024-03-01 12:00';
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE m->>'s' = 'x';
-- An object's text is not looked up in the index (it would miss it).
SELECT tscoll.create_collection('o', 't', 'm');
SELECT tscoll.create_index('o', '{"m.k": 1}');
INSERT INTO o VALUES ('2024-01-01', '{"k": {"a": 1}}', '{}'), ('2024-01-01', '{"k": "x"}', '{}'),
                     ('2024-01-01', '{"k": 1.50}', '{}'), ('2024-01-01', '{"k": true}', '{}');
SELECT (SELECT count(*) FROM o WHERE m->>'k' = '{"a": 1}') AS object,
       (SELECT count(*) FROM o WHERE m->>'k' = 'x') AS string,
       (SELECT count(*) FROM o WHERE m->>'k' = '1.50') AS number,
       (SELECT count(*) FROM o WHERE m->>'k' = '1.5') AS other_spelling,
       (SELECT count(*) FROM o WHERE m->>'k' = 'true') AS boolean;
-- The same values as parameters and LATERAL references, known only when
-- the query runs: meta->'k' = ANY(tscoll._jsonb_spellings(...)), which the
-- index serves, objects and arrays included.
CREATE TABLE wanted (k text);
INSERT INTO wanted VALUES ('{"a": 1}'), ('x'), ('1.50'), ('1.5'), ('true'), ('[1'), ('{"a": 1e999999}'), (NULL);
SELECT w.k, (SELECT count(*) FROM o WHERE m->>'k' = w.k) AS measurements FROM wanted w ORDER BY 1;
SELECT w.k, n.count FROM wanted w, LATERAL (SELECT count(*) FROM o WHERE m->>'k' = w.k) n ORDER BY 1;
SET plan_cache_mode = force_generic_plan;
PREPARE by_k(text) AS SELECT count(*) FROM o WHERE m->>'k' = $1;
EXECUTE by_k('{"a": 1}');
EXECUTE by_k('1.50');
EXECUTE by_k('{"a":1}');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) EXECUTE by_k('x');
RESET enable_seqscan;
RESET plan_cache_mode;
DEALLOCATE by_k;
SELECT tscoll._jsonb_spellings('{"a": 1}'), tscoll._jsonb_spellings('12'), tscoll._jsonb_spellings('012');
-- Lists and containment: meta->>'k' IN (...) and = ANY(...) become
-- meta->'k' = ANY(the jsonb values printed so), meta @> '{"k": v}' with a
-- scalar v becomes meta->'k' = v; objects and arrays inside stay the
-- query's own.
INSERT INTO o VALUES ('2024-01-01', '{"k": [1, 2]}', '{}');
SELECT (SELECT count(*) FROM o WHERE m->>'k' IN ('x', '1.50', '{"a": 1}')) AS listed,
       (SELECT count(*) FROM o WHERE m->>'k' = ANY(ARRAY['true', NULL, '1.5'])) AS any,
       (SELECT count(*) FROM o WHERE m->>'k' IN ('[1, 2]')) AS array_text,
       (SELECT count(*) FROM o WHERE m @> '{"k": 1.5}') AS contains_number,
       (SELECT count(*) FROM o WHERE m @> '{"k": "x"}') AS contains_string,
       (SELECT count(*) FROM o WHERE m @> '{"k": {"a": 1}}') AS contains_object,
       (SELECT count(*) FROM o WHERE m @> '{"k": [2]}') AS contains_array,
       (SELECT count(*) FROM o WHERE m @> '{"k": 2}') AS scalar_in_array;
SET plan_cache_mode = force_generic_plan;
PREPARE in_k(text[]) AS SELECT count(*) FROM o WHERE m->>'k' = ANY($1);
EXECUTE in_k(ARRAY['x', '{"a": 1}', '[1, 2]']);
DEALLOCATE in_k;
RESET plan_cache_mode;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM o WHERE m->>'k' IN ('x', '1.50');
EXPLAIN (COSTS OFF) SELECT count(*) FROM o WHERE m @> '{"k": "x", "z": [1]}';
RESET enable_seqscan;
-- jsonb_build_object (evaluated when the query runs): the same, for
-- members of scalar types; JSON null for NULL.
INSERT INTO o VALUES ('2024-01-02', '{"k": null}', '{}');
CREATE FUNCTION contained_counts(pruning boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    PERFORM set_config('tscoll.enable_bucket_pruning', pruning::text, true);
    SELECT string_agg(w.k || '=' || n, ' ' ORDER BY w.k) INTO result
      FROM (VALUES ('x'), ('1.50'), ('true')) w(k),
           LATERAL (SELECT count(*) AS n FROM o WHERE m @> jsonb_build_object('k', w.k)) c;
    RETURN result || ' num=' || (SELECT count(*) FROM o WHERE m @> jsonb_build_object('k', 1.5))
           || ' null=' || (SELECT count(*) FROM o WHERE m @> jsonb_build_object('k', NULL::text))
           || ' bool=' || (SELECT count(*) FROM o WHERE m @> jsonb_build_object('k', true, 'z', NULL::jsonb));
END $$;
SELECT contained_counts(true) AS pruned, contained_counts(false) AS unpruned;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM o WHERE m @> jsonb_build_object('k', 'x');
RESET enable_seqscan;
-- Pruning off: no bucket conditions, every field decoded.
SET tscoll.enable_bucket_pruning = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM p WHERE t = '2024-03-02 10:00';
RESET tscoll.enable_bucket_pruning;
-- A query that reads doc whole unpacks it whole.
EXPLAIN (COSTS OFF) SELECT doc FROM p WHERE t = '2024-03-02 10:00';
SELECT count(*) FROM p WHERE t = '2024-03-02 10:00';
-- Only time and meta read: no field is decoded.
EXPLAIN (COSTS OFF, VERBOSE) SELECT t, m FROM p WHERE m->>'s' = '1';

-- Parameters in generic plans, now() and stable expressions.
SET plan_cache_mode = force_generic_plan;
PREPARE q1(timestamptz, timestamptz, float8) AS
    SELECT count(*) FROM p WHERE t >= $1 AND t < $2 AND (doc->>'v')::float8 > $3;
PREPARE q2(timestamptz, timestamptz, float8) AS
    SELECT count(*) FROM plain WHERE t >= $1 AND t < $2 AND (doc->>'v')::float8 > $3;
EXPLAIN (COSTS OFF) EXECUTE q1('2024-03-02', '2024-03-02 01:00', 50);
EXECUTE q1('2024-03-02', '2024-03-02 01:00', 50);
EXECUTE q2('2024-03-02', '2024-03-02 01:00', 50);
EXECUTE q1('2024-03-01 05:17', '2024-03-02 17:03', 97.5);
EXECUTE q2('2024-03-01 05:17', '2024-03-02 17:03', 97.5);
RESET plan_cache_mode;
SELECT (SELECT count(*) FROM p WHERE t > '2024-03-01'::date + interval '30 hours')
     = (SELECT count(*) FROM plain WHERE t > '2024-03-01'::date + interval '30 hours') AS same;
SELECT tscoll.create_collection('recent', 't');
INSERT INTO recent SELECT now() - i * interval '1 minute', '{}' FROM generate_series(0, 299) i;
SELECT count(*) FROM recent WHERE t > now() - interval '90 minutes' AND t <= now();
EXPLAIN (COSTS OFF) SELECT count(*) FROM recent WHERE t > now() - interval '90 minutes';

-- The time window: a SELECT from the view alone gives _unpack_fields its
-- top-level time conditions, one bound per side, and applies the others.
EXPLAIN (COSTS OFF) SELECT count(doc->>'v') FROM p
 WHERE t > '2024-03-02 10:00' AND t >= '2024-03-02 11:00'
   AND t < '2024-03-02 12:00' AND t <= '2024-03-02 11:30';
SELECT predicate, digest('p', predicate, true) = digest('plain', predicate, false) AS same,
       digest('plain', predicate, false) LIKE '0/%' AS none
  FROM (VALUES ($$t > '2024-03-02 10:00' AND t >= '2024-03-02 11:00'
                  AND t < '2024-03-02 12:00' AND t <= '2024-03-02 11:30'$$),
               ((SELECT format('t = %L AND t < %L', t, t + interval '1 second')
                   FROM plain ORDER BY t OFFSET 500 LIMIT 1)),
               ((SELECT format('t >= %L AND t <= %L', t, t) FROM plain ORDER BY t OFFSET 900 LIMIT 1)),
               ($$t >= NULL::timestamptz$$),
               ($$t < NULL::timestamptz AND t > '2024-03-01'$$),
               ($$t > '-infinity' AND t < 'infinity'$$),
               ($$t >= 'infinity'$$),
               ($$t >= '2024-03-02'::date AND t < '2024-03-02 03:00'$$),
               ($$(t < '2024-03-01 02:00' OR t > '2024-03-02 22:00') AND (doc->>'v')::float8 > 50$$),
               ($$t BETWEEN '2024-03-01 23:00' AND '2024-03-02 01:00' AND m->>'s' = '2'$$))
       AS c(predicate);
-- Conditions that do not filter the view's rows alone stay in the query:
-- an outer join's, and a correlated subquery's bound moves with its outer
-- reference.
SELECT (SELECT count(*) FROM (VALUES (1), (9)) g(x) LEFT JOIN p ON p.m->>'s' = g.x::text
         WHERE p.t > '2024-03-02 20:00')
     = (SELECT count(*) FROM (VALUES (1), (9)) g(x) LEFT JOIN plain p ON p.m->>'s' = g.x::text
         WHERE p.t > '2024-03-02 20:00') AS same_left_join;
SELECT array_agg((SELECT count(doc->>'v') FROM p WHERE t >= h AND t < h + interval '1 hour')
                 ORDER BY h)
     = array_agg((SELECT count(doc->>'v') FROM plain WHERE t >= h AND t < h + interval '1 hour')
                 ORDER BY h) AS same_correlated
  FROM generate_series('2024-03-01'::timestamptz, '2024-03-03', interval '7 hours') h;

-- After coll_mod raises the span, plans made before prune with the new one.
SELECT tscoll.create_collection('g', 't', 'm', 'seconds');
INSERT INTO g VALUES ('2024-01-01 00:00', '1', '{"v": 1}');
SET plan_cache_mode = force_generic_plan;
PREPARE later(timestamptz) AS SELECT count(*) FROM g WHERE t >= $1;
EXECUTE later('2024-01-01 04:00');
SELECT tscoll.coll_mod('g', '{"timeseries": {"granularity": "minutes"}}');
-- One bucket now spans five hours.
INSERT INTO g VALUES ('2024-01-02 00:00', '1', '{"v": 2}'), ('2024-01-02 05:00', '1', '{"v": 3}');
SELECT count(*) AS buckets FROM "system.buckets.g";
EXECUTE later('2024-01-02 04:00');
SELECT count(*) FROM g WHERE t >= '2024-01-02 04:00';
RESET plan_cache_mode;

-- (doc->>'f')::float8 reads numbers as float8 and casts the other values
-- where the query casts them: only rows that reach the cast can fail it.
EXPLAIN (COSTS OFF, VERBOSE) SELECT max((doc->>'v')::float8) FROM p WHERE t < '2024-03-01 00:20';
SELECT round(sum((doc->>'v')::float8)::numeric, 6)
     = (SELECT round(sum((doc->>'v')::float8)::numeric, 6) FROM plain) AS same FROM p;
SELECT count((doc->>'s')::float8) FROM p WHERE t < '2000-01-01';
SELECT try($$SELECT (doc->>'s')::float8 FROM p$$);

-- Views on the view, joins and subqueries read the same rows.
CREATE VIEW hot AS SELECT t, m, (doc->>'v')::float8 AS v FROM p WHERE (doc->>'v')::float8 > 95;
SELECT (SELECT count(*) FROM hot WHERE t < '2024-03-02')
     = (SELECT count(*) FROM plain WHERE (doc->>'v')::float8 > 95 AND t < '2024-03-02') AS same;
SELECT (SELECT count(*) FROM p JOIN plain USING (t) WHERE p.t < '2024-03-01 06:00' AND p.doc->>'s' = 'x1')
     = (SELECT count(*) FROM plain a JOIN plain b USING (t) WHERE a.t < '2024-03-01 06:00' AND a.doc->>'s' = 'x1')
       AS same;
SELECT (SELECT count(*) FROM plain WHERE EXISTS (SELECT FROM p WHERE p.t = plain.t AND p.doc->>'w' = '7'))
     = (SELECT count(*) FROM plain WHERE doc->>'w' = '7') AS same;
DROP VIEW hot;

-- The last point per series reads only each series' latest bucket, and only
-- its latest measurement; the same rows as from the plain table.
CREATE FUNCTION last_points(rel text, extra text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    result text;
BEGIN
    EXECUTE format($q$SELECT string_agg(concat_ws('|', k, t, v), ', ' ORDER BY k) FROM (
                        SELECT DISTINCT ON (m->>'s') m->>'s' AS k, t, doc->>'s' AS v
                          FROM %s %s ORDER BY m->>'s', t DESC, doc->>'s') x$q$, rel, extra)
        INTO result;
    RETURN result;
END
$$;
SELECT last_points('p', '') = last_points('plain', '') AS same;
SELECT last_points('p', $$WHERE m->>'s' <> '2'$$) = last_points('plain', $$WHERE m->>'s' <> '2'$$)
       AS same;
-- The first points by time (ORDER BY t [DESC] LIMIT k), filtered on meta at
-- most, read only the buckets that reach the k-th latest (earliest) max_time
-- of the series read; the same rows as from the plain table, ties included.
CREATE FUNCTION first_points(rel text, query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    result text;
BEGIN
    EXECUTE format('SELECT string_agg(concat_ws(''|'', t, m, doc), '', '' ORDER BY t, doc::text, m::text)
                      FROM (%s) x', format(query, rel)) INTO result;
    RETURN result;
END
$$;
SELECT (SELECT count(*) FROM plain GROUP BY t ORDER BY 1 DESC LIMIT 1) AS most_at_one_time;
SELECT q, first_points('p', q) IS NOT DISTINCT FROM first_points('plain', q) AS same,
       unpack_counts(format(q, 'p'))
  FROM (VALUES ($$SELECT t, m, doc FROM %s ORDER BY t DESC, doc::text, m::text LIMIT 5$$),
               ($$SELECT t, m, doc FROM %s WHERE m->>'s' = '1' ORDER BY t, doc::text LIMIT 7$$),
               ($$SELECT t, m, doc FROM %s WHERE m->>'s' IN ('2', '3')
                  ORDER BY t DESC, doc::text, m::text LIMIT 3 OFFSET 40$$),
               ($$SELECT t, m, doc FROM %s WHERE m IS NULL ORDER BY t DESC, doc::text LIMIT 200$$),
               ($$SELECT t, m, doc FROM %s WHERE m->>'s' = 'none' ORDER BY t LIMIT 1$$)) AS queries(q);
EXPLAIN (COSTS OFF) SELECT t, (doc->>'v')::float8 FROM p WHERE m->>'s' = '1' ORDER BY t DESC LIMIT 5;
SELECT count(*) AS tried,
       count(*) FILTER (WHERE first_points('p', q) IS DISTINCT FROM first_points('plain', q))
         AS differ
  FROM (SELECT format('SELECT t, m, %s FROM %%s %s ORDER BY t %s, %s LIMIT %s',
                      r, w, d, o, k) AS q
          FROM (VALUES ('doc', 'doc::text, m::text'),
                       -- fields only: _unpack_fields skips what is before the bound
                       ($$jsonb_build_array(doc->>'v', doc->'w', doc->>'s') AS doc$$,
                        $$doc->>'v', doc->>'w', doc->>'s', m::text$$)) AS reads(r, o),
               unnest(ARRAY['', $$WHERE m->>'s' = '4'$$, $$WHERE m->>'s' <> '0'$$,
                            $$WHERE m IS NOT NULL AND m->>'s' < '3'$$]) w,
               unnest(ARRAY['ASC', 'DESC']) d,
               unnest(ARRAY['1', '2', '19', '20', '21', '333', '2999', '3001', '4 OFFSET 17']) k) qs;
-- A condition on time: the latest buckets may not match; pruned by time only.
SELECT last_points('p', $$WHERE t < '2024-03-02'$$) = last_points('plain', $$WHERE t < '2024-03-02'$$)
       AS same;
EXPLAIN (COSTS OFF)
SELECT DISTINCT ON (m) m, t, doc->>'v' FROM p ORDER BY m, t DESC;
SELECT DISTINCT ON (m) m, t, doc->>'v' FROM p ORDER BY m, t DESC;
SELECT DISTINCT ON (m) m, t, doc->>'v' FROM plain ORDER BY m, t DESC;

-- count(*) and meta-only reads count control.count rows: no data is read.
EXPLAIN (COSTS OFF) SELECT count(*) FROM p;
SELECT (SELECT count(*) FROM p) = (SELECT count(*) FROM plain) AS same;
SELECT (SELECT string_agg(m::text || ':' || n, ',' ORDER BY m::text)
          FROM (SELECT m, count(*) AS n FROM p GROUP BY m) x)
     = (SELECT string_agg(m::text || ':' || n, ',' ORDER BY m::text)
          FROM (SELECT m, count(*) AS n FROM plain GROUP BY m) x) AS same;
-- After deleting part of many buckets, control.count still counts exactly.
BEGIN;
DELETE FROM p WHERE (doc->>'w')::int < 10;
DELETE FROM plain WHERE (doc->>'w')::int < 10;
SELECT (SELECT count(*) FROM p) = (SELECT count(*) FROM plain) AS same, count(*) FROM plain;
ROLLBACK;

-- max(time), by meta at most, reads one row per bucket: control.max is exact.
EXPLAIN (COSTS OFF) SELECT m, max(t) FROM p GROUP BY m;
SELECT (SELECT string_agg(m::text || ':' || x, ',' ORDER BY m::text)
          FROM (SELECT m, max(t) AS x FROM p GROUP BY m) s)
     = (SELECT string_agg(m::text || ':' || x, ',' ORDER BY m::text)
          FROM (SELECT m, max(t) AS x FROM plain GROUP BY m) s) AS same;
SELECT (SELECT max(t) FROM p WHERE m->>'s' = '2') = (SELECT max(t) FROM plain WHERE m->>'s' = '2')
       AS same;
-- min(t): control.min is rounded down, so each bucket's times are decoded,
-- and only its earliest and latest become rows (one in ten measurements
-- arrived out of order, so the earliest is not always the first).
EXPLAIN (COSTS OFF) SELECT max(t), min(t) FROM p;
SELECT (SELECT string_agg(m::text || ':' || x || ':' || y, ',' ORDER BY m::text)
          FROM (SELECT m, min(t) AS x, max(t) AS y FROM p GROUP BY m) s)
     = (SELECT string_agg(m::text || ':' || x || ':' || y, ',' ORDER BY m::text)
          FROM (SELECT m, min(t) AS x, max(t) AS y FROM plain GROUP BY m) s) AS same;
SELECT (SELECT min(t) FROM p WHERE m->>'s' = '2') = (SELECT min(t) FROM plain WHERE m->>'s' = '2')
       AS same;
SELECT count(*) AS buckets,
       count(*) FILTER (WHERE (SELECT min(u.time) FROM tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u)
                              <> (SELECT min(e.t) FROM tscoll._bucket_ends(b._id, b.data, 't') e(t, d)))
         AS wrong_earliest,
       count(*) FILTER (WHERE (SELECT min(u.time) FROM tscoll._unpack(b._id, b.meta, b.data, 't', 'm') u)
                              <> min_time) AS earliest_not_min_time
  FROM "system.buckets.p" b;
-- Beside another aggregate, or with a time condition, every measurement
-- is read.
SELECT (SELECT max(t)::text || count(*) FROM p) = (SELECT max(t)::text || count(*) FROM plain)
       AS same;
SELECT (SELECT min(t) FROM p WHERE t > '2024-03-01 12:00')
     = (SELECT min(t) FROM plain WHERE t > '2024-03-01 12:00') AS same;
EXPLAIN (COSTS OFF) SELECT min(t), count(*) FROM p;

-- Parallel scans: a bucket table's measurements are in its TOAST, so it
-- gets the workers of a heap of its heap and TOAST pages together (here
-- under 16 and over 48 pages: 2 workers with a threshold of 16), unless
-- its parallel_workers option says otherwise.
SELECT setseed(0.5);
SELECT tscoll.create_collection('wide', 't', 'm');
INSERT INTO wide SELECT '2024-01-01'::timestamptz + i * interval '1 second',
                        jsonb_build_object('h', i % 4), jsonb_build_object('v', random(), 'w', random())
                   FROM generate_series(1, 40000) i;
SELECT pg_relation_size(oid) < 16 * 8192 AS small_heap,
       pg_relation_size(oid) + pg_relation_size(reltoastrelid) >= 48 * 8192 AS large_with_toast
  FROM pg_class WHERE relname = 'system.buckets.wide';
SET min_parallel_table_scan_size = '128kB';
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
EXPLAIN (COSTS OFF) SELECT t, (doc->>'v')::float8 FROM wide WHERE (doc->>'v')::float8 > 0.5;
CREATE TEMP TABLE parallel_read AS
    SELECT count(*) AS n, sum((doc->>'v')::float8) AS s FROM wide WHERE (doc->>'v')::float8 > 0.5;
ALTER TABLE "system.buckets.wide" SET (parallel_workers = 0);
EXPLAIN (COSTS OFF) SELECT t, (doc->>'v')::float8 FROM wide WHERE (doc->>'v')::float8 > 0.5;
SELECT n, round(s::numeric, 6) = (SELECT round(sum((doc->>'v')::float8)::numeric, 6) FROM wide
                                    WHERE (doc->>'v')::float8 > 0.5) AS same_sum
  FROM parallel_read;
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
