-- Queries as users write them: a grammar of time groupings, meta
-- conditions, time conditions, measurement filters, projections and
-- wrappers, drawn at random, each compared with the same query on a plain
-- table holding the same measurements, with the fast paths on and off
-- (doc/REFERENCE.md §3.4). A query that differs is printed.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT setseed(0.31);
SELECT tscoll.create_collection('qf', 't', 'm', bucket_max_span_seconds => 3600,
                                bucket_rounding_seconds => 3600);
SET tscoll.bucket_max_count = 100;
INSERT INTO qf (t, m, doc)
SELECT t, m, doc FROM (
SELECT '2024-03-09'::timestamptz + (random() * 86400)::int * interval '1 second'
           + (random() * 1000)::int * interval '1 millisecond' AS t,
       CASE i % 5 WHEN 0 THEN '{"s": 1}'::jsonb WHEN 1 THEN '{"s": 2, "r": "a"}' WHEN 2 THEN '{"s": "x"}'
                  WHEN 3 THEN '{"s": 1.5}' END AS m,
       jsonb_strip_nulls(jsonb_build_object(
           'v', CASE WHEN i % 43 = 0 THEN to_jsonb('7.25'::text)
                     WHEN i % 37 = 0 THEN 'null'::jsonb
                     WHEN i % 41 = 0 THEN NULL
                     WHEN i % 7 = 0 THEN to_jsonb((random() * 100)::int)
                     ELSE to_jsonb(round((random() * 200 - 100)::numeric, 2)) END,
           'w', CASE WHEN i % 3 = 0 THEN to_jsonb(i) END)) AS doc
  FROM generate_series(1, 3000) i) AS measurements
 ORDER BY t + CASE WHEN random() < 0.1 THEN interval '-1 hour' ELSE interval '0' END;
RESET tscoll.bucket_max_count;
SELECT tscoll.create_index('qf', '{"m.s": 1, "t": 1}');
ANALYZE "system.buckets.qf";
SET tscoll.enable_bucket_pruning = off;
CREATE TABLE qf_plain AS SELECT t, m, doc FROM qf;
RESET tscoll.enable_bucket_pruning;
SELECT count(*) AS measurements, count(DISTINCT m) AS series FROM qf_plain;

CREATE FUNCTION pick(options text[]) RETURNS text LANGUAGE sql AS
$$ SELECT options[1 + floor(random() * array_length(options, 1))::int] $$;

-- One query of the grammar, with %1$s for the relation.
CREATE FUNCTION random_query() RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    grouping text := pick(ARRAY['', 'date_trunc(''minute'', t)', 'date_trunc(''hour'', t)',
        'date_trunc(''hour'', t, ''Asia/Kathmandu'')', 'date_bin(''7 minutes'', t, ''2024-03-09 00:03'')',
        'tscoll.time_bucket(''5 minutes'', t)', 'floor(extract(epoch from t)/60)*60',
        'to_timestamp(floor(extract(epoch from t)/300)*300)', 'floor(extract(epoch from t)/900)']);
    meta text := pick(ARRAY['', 'm->>''s'' = ''1''', 'm->>''s'' IN (''1'', ''x'')',
        'm->>''s'' = ANY(ARRAY[''2'', ''1.5''])', 'm @> ''{"s": 1}''', 'm IS NULL', 'm->>''r'' = ''a''']);
    lower text := '''2024-03-09 ' || lpad((floor(random() * 24))::text, 2, '0') || ':'
                  || lpad((floor(random() * 60))::text, 2, '0') || '''';
    upper text := '''2024-03-09 ' || lpad((floor(random() * 24))::text, 2, '0') || ':59:59.5''';
    timing text := pick(ARRAY['', 't >= ' || lower, 't < ' || upper,
        't >= ' || lower || ' AND t < ' || upper, 't BETWEEN ' || lower || ' AND ' || upper]);
    filter text := pick(ARRAY['', '', '(doc->>''v'')::float8 > 50', '(doc->>''v'')::float8 <= -20']);
    aggregates text := pick(ARRAY['max((doc->>''v'')::float8)', 'min((doc->>''v'')::float8), count(*)',
        'round(sum((doc->>''v'')::float8)::numeric, 6)', 'round(avg((doc->>''v'')::float8)::numeric, 6), count((doc->>''w'')::float8)',
        'count(*)']);
    conditions text := concat_ws(' AND ', nullif(meta, ''), nullif(timing, ''), nullif(filter, ''));
    where_clause text := CASE WHEN conditions = '' THEN '' ELSE ' WHERE ' || conditions END;
    body text;
    form text := pick(ARRAY['aggregate', 'aggregate', 'aggregate', 'rows', 'star', 'latest']);
    by_meta boolean;
    source text;
BEGIN
    IF form = 'rows' THEN
        body := 'SELECT t, m->>''s'' AS s, (doc->>''v'')::float8 AS v FROM %1$s' || where_clause;
    ELSIF form = 'star' THEN
        body := 'SELECT * FROM %1$s' || where_clause;
    ELSIF form = 'latest' AND grouping <> '' AND meta = '' AND filter = '' THEN
        body := 'SELECT ' || grouping || ' AS g, ' || aggregates || ' FROM %1$s' || where_clause
                || ' GROUP BY 1 ORDER BY 1 DESC LIMIT ' || pick(ARRAY['1', '4', '3 OFFSET 2']);
    ELSIF grouping = '' THEN
        body := 'SELECT m->>''s'' AS s, ' || aggregates || ' FROM %1$s' || where_clause || ' GROUP BY 1';
    ELSE
        by_meta := random() < 0.5;
        body := 'SELECT ' || grouping || ' AS g, '
                || CASE WHEN by_meta THEN 'm->>''s'' AS s, ' ELSE '' END
                || aggregates || ' FROM %1$s' || where_clause || ' GROUP BY ' || pick(ARRAY['g', '1'])
                || CASE WHEN by_meta THEN pick(ARRAY[', s', ', 2']) ELSE '' END;
    END IF;
    -- The collection read as it is, or through a subquery or a CTE that
    -- names its columns (as a user's view does), with a WHERE of its own.
    source := pick(ARRAY['%1$s', '%1$s', '(SELECT * FROM %1$s) r',
        '(SELECT t, m, doc FROM %1$s WHERE t > ''2024-03-09 01:00'') r', 'named']);
    IF source = 'named' THEN
        body := 'WITH named AS (SELECT doc, t, m FROM %1$s) ' || replace(body, 'FROM %1$s', 'FROM named');
    ELSE
        body := replace(body, 'FROM %1$s', 'FROM ' || source);
    END IF;
    RETURN pick(ARRAY[body, body, 'SELECT * FROM (' || body || ') sub',
                      'WITH q AS (' || body || ') SELECT * FROM q']);
END
$$;

-- How many rows of `query` on qf differ from the plain table's, with the
-- fast paths on or off.
CREATE FUNCTION differ(query text, fast boolean) RETURNS bigint LANGUAGE plpgsql AS
$$
DECLARE
    n bigint;
BEGIN
    PERFORM set_config('tscoll.enable_bucket_pruning', fast::text, true);
    EXECUTE format('SELECT count(*) FROM (((%1$s) EXCEPT ALL (%2$s)) UNION ALL ((%2$s) EXCEPT ALL (%1$s))) d',
                   format(query, 'qf'), format(query, 'qf_plain')) INTO n;
    RETURN n;
END
$$;

CREATE TEMP TABLE drawn AS SELECT i, random_query() AS query FROM generate_series(1, 300) i;
SELECT count(DISTINCT query) > 200 AS varied FROM drawn;
-- Every query, both ways: none is printed when all agree.
SELECT i, query, differ(query, true) AS fast, differ(query, false) AS slow
  FROM drawn WHERE differ(query, true) <> 0 OR differ(query, false) <> 0;
SELECT count(*) AS queries FROM drawn;
-- Which fast paths the drawn queries took.
CREATE FUNCTION plan_of(query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    plan text := '';
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(query, 'qf') LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END
$$;
SELECT count(*) FILTER (WHERE plan LIKE '%Partial Aggregates%') AS in_buckets,
       count(*) FILTER (WHERE plan LIKE '%Time Group%') AS by_time_group,
       count(*) FILTER (WHERE plan LIKE '%Time Group: date_bin%') AS by_bins,
       count(*) FILTER (WHERE plan LIKE '%Measurement Filter%') AS prefiltered,
       count(*) FILTER (WHERE plan LIKE '%Decoded Fields: all%') AS whole_documents,
       count(*) FILTER (WHERE plan LIKE '%Index%') AS through_an_index
  FROM (SELECT plan_of(query) AS plan FROM drawn) p;

-- Forms beside the grammar: gap filling, aggregates that are not computed
-- in buckets, subqueries of the collection that refer to an outer query,
-- on the nullable side of an outer join or read as whole rows, a user's
-- own view, and a UNION ALL of two collections.
SELECT q, differ(q, true) AS fast, differ(q, false) AS slow
  FROM unnest(ARRAY[
    $q$SELECT g.h, x.top FROM generate_series('2024-03-09'::timestamptz, '2024-03-10', interval '1 hour') g(h)
         LEFT JOIN (SELECT date_trunc('hour', t) AS h, max((doc->>'v')::float8) AS top FROM %1$s GROUP BY 1) x
         ON x.h = g.h$q$,
    $q$SELECT m->>'s' AS s, count(DISTINCT (doc->>'v')::float8), count(*) FILTER (WHERE (doc->>'v')::float8 > 0),
              percentile_cont(0.5) WITHIN GROUP (ORDER BY (doc->>'v')::float8) FROM %1$s GROUP BY 1$q$,
    $q$SELECT h, top - lag(top) OVER (ORDER BY h) AS rise
         FROM (SELECT date_bin('30 minutes', t, '2024-03-09') AS h, max((doc->>'v')::float8) AS top
                 FROM %1$s WHERE t < '2024-03-09 12:00' GROUP BY 1) x$q$,
    $q$SELECT g.h, (SELECT count(*) FROM (SELECT t FROM %1$s WHERE t < g.h) r WHERE t > g.h - interval '2 hours')
         FROM generate_series('2024-03-09'::timestamptz, '2024-03-10', interval '3 hours') g(h)$q$,
    $q$SELECT g.h, r.v FROM generate_series('2024-03-09'::timestamptz, '2024-03-10', interval '1 hour') g(h)
         LEFT JOIN (SELECT t, (doc->>'v')::float8 AS v FROM %1$s WHERE m->>'s' = '1') r
         ON r.t >= g.h AND r.t < g.h + interval '5 minutes'$q$,
    $q$SELECT r FROM (SELECT t, (doc->>'v')::float8 AS v FROM %1$s WHERE m->>'s' = '2') r WHERE t < '2024-03-09 03:00'$q$]) q;
CREATE VIEW qf_user AS SELECT t, m->>'s' AS series, (doc->>'v')::float8 AS v FROM qf;
CREATE VIEW qf_plain_user AS SELECT t, m->>'s' AS series, (doc->>'v')::float8 AS v FROM qf_plain;
SELECT count(*) AS differ FROM (
  (SELECT date_trunc('hour', t), series, max(v) FROM qf_user WHERE series IN ('1', '2') GROUP BY 1, 2
   EXCEPT ALL
   SELECT date_trunc('hour', t), series, max(v) FROM qf_plain_user WHERE series IN ('1', '2') GROUP BY 1, 2)
  UNION ALL
  (SELECT date_trunc('hour', t), series, max(v) FROM qf_plain_user WHERE series IN ('1', '2') GROUP BY 1, 2
   EXCEPT ALL
   SELECT date_trunc('hour', t), series, max(v) FROM qf_user WHERE series IN ('1', '2') GROUP BY 1, 2)) d;
-- A view on the collection is merged into the query that reads it: the
-- query's time condition prunes buckets and its grouping is computed in
-- buckets, as on the collection itself; so for a CTE read once and a view
-- on that view.
EXPLAIN (COSTS OFF)
SELECT date_trunc('hour', t), series, max(v) FROM qf_user WHERE t < '2024-03-09 06:00' GROUP BY 1, 2;
CREATE VIEW qf_user_positive AS SELECT * FROM qf_user WHERE v > 0;
EXPLAIN (COSTS OFF)
WITH r AS (SELECT t, v FROM qf_user_positive WHERE series = '1')
SELECT t, v FROM r WHERE t >= '2024-03-09 20:00' ORDER BY t DESC LIMIT 3;
SELECT count(*) AS differ FROM (
  (WITH r AS (SELECT t, v FROM qf_user_positive WHERE series = '1')
   SELECT t, v FROM r WHERE t >= '2024-03-09 20:00' ORDER BY t DESC LIMIT 3)
  EXCEPT ALL
  (SELECT t, (doc->>'v')::float8 FROM qf_plain WHERE m->>'s' = '1' AND (doc->>'v')::float8 > 0
      AND t >= '2024-03-09 20:00' ORDER BY t DESC LIMIT 3)) d;
-- Not merged: a subquery with anything volatile (its WHERE would run once
-- per row of the join), the source of a MERGE (whose WHERE is the ON of an
-- outer join), a CTE read twice, or one asked to be materialized.
CREATE SEQUENCE qf_seq;
SELECT count(*) FROM (SELECT t FROM qf WHERE nextval('qf_seq') <= 1000) r, generate_series(1, 3) g;
SELECT setval('qf_seq', 1, false);
WITH r AS (SELECT t FROM qf WHERE nextval('qf_seq') <= 1000) SELECT count(*) FROM r, generate_series(1, 3) g;
DROP SEQUENCE qf_seq;
CREATE TABLE qf_target (t timestamptz, v float8);
MERGE INTO qf_target USING (SELECT t, (doc->>'v')::float8 AS v FROM qf WHERE m->>'s' = '1') r
   ON qf_target.t = r.t WHEN NOT MATCHED THEN INSERT VALUES (r.t, r.v);
SELECT (SELECT count(*) FROM qf_target) = (SELECT count(*) FROM qf_plain WHERE m->>'s' = '1') AS merged_each_once;
DROP TABLE qf_target;
EXPLAIN (COSTS OFF)
WITH r AS MATERIALIZED (SELECT t, v FROM qf_user) SELECT max(v) FROM r WHERE t < '2024-03-09 01:00';
DROP VIEW qf_user_positive, qf_user, qf_plain_user;
SELECT tscoll.create_collection('qf_other', 't', 'm') IS NOT NULL AS created;
INSERT INTO qf_other SELECT t + interval '1 day', m, doc - '_id' - 't' - 'm' FROM qf_plain WHERE m->>'s' = '1';
CREATE TABLE qf_other_plain AS SELECT t, m, doc - '_id' AS doc FROM qf_other;
SELECT count(*) AS differ FROM (
  (SELECT date_trunc('hour', t) h, max((doc->>'v')::float8) FROM (SELECT t, doc FROM qf UNION ALL SELECT t, doc FROM qf_other) u GROUP BY 1
   EXCEPT ALL
   SELECT date_trunc('hour', t) h, max((doc->>'v')::float8) FROM (SELECT t, doc FROM qf_plain UNION ALL SELECT t, doc FROM qf_other_plain) u GROUP BY 1)
  UNION ALL
  (SELECT date_trunc('hour', t) h, max((doc->>'v')::float8) FROM (SELECT t, doc FROM qf_plain UNION ALL SELECT t, doc FROM qf_other_plain) u GROUP BY 1
   EXCEPT ALL
   SELECT date_trunc('hour', t) h, max((doc->>'v')::float8) FROM (SELECT t, doc FROM qf UNION ALL SELECT t, doc FROM qf_other) u GROUP BY 1)) d;
