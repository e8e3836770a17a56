-- Aggregation in buckets (SPEC §5, doc/ARCHITECTURE.md): queries that
-- aggregate (doc->>'f')::float8 by date_trunc(unit, time) and meta read
-- partial aggregates per bucket (_unpack_groups). Every query here gives
-- what the same query gives on a plain table holding the same measurements,
-- including in time zones whose offset changes inside a bucket.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT setseed(0.17);
-- Buckets of up to two hours, aligned to even UTC hours: the DST changes of
-- New York (07:00 UTC) and Lord Howe (15:00 UTC) fall inside buckets.
SELECT tscoll.create_collection('g', 't', 'm', bucket_max_span_seconds => 7200,
                                bucket_rounding_seconds => 7200);
SET tscoll.bucket_max_count = 200;
INSERT INTO g (t, m, doc)
SELECT t, m, doc FROM (
SELECT CASE WHEN i <= 2000 THEN '2024-03-09'::timestamptz + (random() * 172800)::int * interval '1 second'
            ELSE '2024-04-06 12:00'::timestamptz + (random() * 21600)::int * interval '1 second' END AS t,
       CASE i % 4 WHEN 0 THEN '{"s": 1}'::jsonb WHEN 1 THEN '{"s": 2}' WHEN 2 THEN '{"s": "x"}' END AS m,
       jsonb_strip_nulls(jsonb_build_object(
           'v', CASE WHEN i % 50 = 0 THEN to_jsonb('12.5'::text)
                     WHEN i % 37 = 0 THEN 'null'::jsonb
                     WHEN i % 41 = 0 THEN NULL
                     WHEN i % 7 = 0 THEN to_jsonb((random() * 100)::int)
                     ELSE to_jsonb(round((random() * 200 - 100)::numeric, 3)) END,
           'w', CASE WHEN i % 3 = 0 THEN to_jsonb(i) END,
           's', 'x' || (i % 4))) AS doc
  FROM generate_series(1, 2600) i) AS measurements
 ORDER BY t + CASE WHEN random() < 0.1 THEN interval '-1 hour' ELSE interval '0' END;
RESET tscoll.bucket_max_count;
SELECT count(*) > 30 AS several_buckets FROM "system.buckets.g";

SET tscoll.enable_bucket_pruning = off;
CREATE TABLE gp AS SELECT t, m, doc FROM g;
RESET tscoll.enable_bucket_pruning;

-- `query` with %1$s as the relation: whether g gives what gp gives, and
-- whether g's plan aggregates in buckets or prefilters measurements.
CREATE FUNCTION compare(query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    differ bigint;
    rows bigint;
    plan text := '';
    line text;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT * FROM (%1$s) a EXCEPT ALL SELECT * FROM (%2$s) b)
                    UNION ALL (SELECT * FROM (%2$s) b EXCEPT ALL SELECT * FROM (%1$s) a)) d',
                   format(query, 'g'), format(query, 'gp')) INTO differ;
    EXECUTE format('SELECT count(*) FROM (%s) r', format(query, 'g')) INTO rows;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, VERBOSE) ' || format(query, 'g') LOOP
        plan := plan || line;
    END LOOP;
    RETURN rows || ' rows, ' || CASE WHEN differ = 0 THEN 'same' ELSE differ || ' DIFFER' END
           || CASE WHEN plan LIKE '%Partial Aggregates:%' THEN ', in buckets' ELSE '' END
           || CASE WHEN plan LIKE '%Measurement Filter:%' THEN ', prefiltered' ELSE '' END;
END
$$;

-- Every aggregate, per hour and series, within bounds.
SELECT compare($q$SELECT date_trunc('hour', t) AS h, m->>'s' AS s,
       max((doc->>'v')::float8), min((doc->>'v')::float8),
       round(sum((doc->>'v')::float8)::numeric, 6) AS sum, round(avg((doc->>'v')::float8)::numeric, 6) AS avg,
       count((doc->>'v')::float8), count(*), count((doc->>'w')::float8)
  FROM %1$s WHERE t >= '2024-03-09 05:00' AND t < '2024-03-10 20:00' GROUP BY 1, 2$q$);
-- Each bound form, and none.
SELECT compare(format($q$SELECT date_trunc('minute', t), max((doc->>'v')::float8), count(*)
                        FROM %%1$s WHERE %s GROUP BY 1$q$, c))
  FROM unnest(ARRAY['t > ''2024-03-10 01:00''', 't <= ''2024-03-09 07:30''',
                    't BETWEEN ''2024-03-10 06:00'' AND ''2024-03-10 08:15''',
                    't = (SELECT t FROM gp ORDER BY t LIMIT 1 OFFSET 700)',
                    '''2024-03-10 12:00'' > t AND t > ''2024-03-10 11:00''', 'true']) c;
-- No time group: one group per bucket; meta groups only.
SELECT compare($q$SELECT max((doc->>'v')::float8), min((doc->>'v')::float8), count(*)
                    FROM %1$s WHERE t > '2024-03-10'$q$);
SELECT compare($q$SELECT m->>'s', round(avg((doc->>'v')::float8)::numeric, 6) FROM %1$s GROUP BY 1$q$);
-- HAVING, ORDER BY an aggregate, LIMIT, meta conditions.
SELECT compare($q$SELECT date_trunc('hour', t), max((doc->>'v')::float8) AS top FROM %1$s
                   WHERE m->>'s' = '1' AND t < '2024-03-10'
                   GROUP BY 1 HAVING count(*) > 10 ORDER BY top DESC LIMIT 5$q$);
-- Units, and time zones whose offset changes inside a bucket.
SELECT tz, unit, compare(format($q$SELECT date_trunc(%L, t), m, max((doc->>'v')::float8),
                                   count(*) FROM %%1$s GROUP BY 1, 2$q$, unit))
  FROM unnest(ARRAY['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu']) tz,
       unnest(ARRAY['second', 'minute', 'hour', 'day', 'month']) unit,
       LATERAL set_config('TimeZone', tz, false) s;
SET TimeZone = 'UTC';

-- Fixed-width bins: date_bin (any stride and origin, also origins after
-- the measurements and strides that do not divide a day), TimescaleDB's
-- time_bucket, and groupings that read time only through
-- floor(extract(epoch from t) / n) (Grafana's $__timeGroup), which the
-- query applies to each bin's start.
SELECT g, compare(format($q$SELECT %s AS g, m->>'s' AS s, max((doc->>'v')::float8),
                                   round(avg((doc->>'v')::float8)::numeric, 6) AS avg, count(*)
                              FROM %%1$s WHERE t >= '2024-03-09 03:00' GROUP BY 1, 2$q$, g))
  FROM unnest(ARRAY[
    $g$date_bin('15 minutes', t, '2000-01-01')$g$,
    $g$date_bin('7 minutes', t, '2024-03-09 00:03:30')$g$,
    $g$date_bin('90 seconds', t, '2030-01-01')$g$,
    $g$date_bin('1 day 2 hours', t, '2024-03-08 22:00:00-05')$g$,
    $g$date_bin('1 microsecond', t, '2024-03-09')$g$,
    $g$tscoll.time_bucket('5 minutes', t)$g$,
    $g$tscoll.time_bucket('1 hour', t, '2024-03-09 00:20')$g$,
    $g$floor(extract(epoch from t) / 60) * 60$g$,
    $g$to_timestamp(floor(extract(epoch from t) / 300) * 300)$g$,
    $g$floor(extract(epoch from t) / 3600)$g$,
    $g$floor(extract(epoch from t) / 7.5)$g$,
    $g$floor(date_part('epoch', t) / 60)$g$,
    $g$floor(extract(epoch from t) / 60) + extract(second from t)$g$]) g;
SELECT compare($q$SELECT date_bin('10 minutes', t, '2024-01-01') AS g, max((doc->>'v')::float8)
                    FROM %1$s WHERE m->>'s' = '1' AND t < '2024-03-10' GROUP BY 1 HAVING count(*) > 2$q$);
EXPLAIN (COSTS OFF)
SELECT floor(extract(epoch from t) / 60) * 60 AS "time", max((doc->>'v')::float8)
  FROM g WHERE t >= '2024-03-09 03:00' GROUP BY 1 ORDER BY 1;
-- Times a microsecond either side of bin edges, and before the epoch.
SELECT tscoll.create_collection('edges', 't') IS NOT NULL AS created;
INSERT INTO edges (t, doc)
SELECT t, jsonb_build_object('v', i) FROM (
  SELECT '1969-12-31 23:00'::timestamptz + k * interval '1 minute' + d * interval '1 microsecond' AS t,
         row_number() OVER () AS i
    FROM generate_series(0, 180) k, unnest(ARRAY[-1, 0, 1]) d) x;
CREATE TABLE edges_plain AS SELECT t, doc FROM edges;
CREATE FUNCTION edges_differ(g text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    q text := 'SELECT %s AS g, sum((doc->>''v'')::float8) AS s, count(*) AS n FROM %s GROUP BY 1';
    differ bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((%1$s EXCEPT ALL %2$s) UNION ALL (%2$s EXCEPT ALL %1$s)) d',
                   format(q, g, 'edges'), format(q, g, 'edges_plain')) INTO differ;
    RETURN differ;
END
$$;
SELECT g, edges_differ(g) AS differ
  FROM unnest(ARRAY[$g$floor(extract(epoch from t) / 60) * 60$g$,
                    $g$floor(extract(epoch from t) / 3600)$g$,
                    $g$date_bin('1 minute', t, '1970-01-01 00:00:00.000001+00')$g$]) g;

-- A stride date_bin refuses: its own error.
SELECT date_bin('1 month', t, '2024-01-01'), count(*) FROM g GROUP BY 1;
SELECT date_bin('0 seconds', t, '2024-01-01'), count(*) FROM g GROUP BY 1;

-- date_trunc in a given time zone (per measurement), and window functions
-- over the combined groups (rates with lag()).
SELECT z, unit, compare(format($q$SELECT date_trunc(%L, t, %L) AS g, m->>'s' AS s,
                                   max((doc->>'v')::float8), count(*)
                              FROM %%1$s GROUP BY 1, 2$q$, unit, z))
  FROM unnest(ARRAY['Asia/Kathmandu', 'America/New_York', 'UTC']) z,
       unnest(ARRAY['minute', 'hour', 'day']) unit;
SELECT compare($q$SELECT date_trunc('hour', t) AS h, max((doc->>'v')::float8) AS top,
                         max((doc->>'v')::float8) - lag(max((doc->>'v')::float8)) OVER (ORDER BY date_trunc('hour', t)) AS rise,
                         sum(count(*)) OVER () AS total
                    FROM %1$s WHERE t < '2024-03-10' GROUP BY 1$q$);
SELECT compare($q$SELECT date_trunc('minute', t) AS g, max((doc->>'v')::float8) AS top,
                         lag(max((doc->>'v')::float8)) OVER (ORDER BY date_trunc('minute', t)) AS before
                    FROM %1$s GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$);
EXPLAIN (COSTS OFF)
SELECT date_trunc('hour', t, 'Asia/Kathmandu'), max((doc->>'v')::float8) FROM g GROUP BY 1;

-- Two conditions on one field, NaN bounds (float8's order: NaN above every
-- number), a meta or time field read through doc, and correlated bounds.
SELECT compare(format($q$SELECT * FROM %%1$s WHERE %s$q$, c))
  FROM unnest(ARRAY['(doc->>''v'')::float8 BETWEEN 10 AND 60',
                    '(doc->>''v'')::float8 >= 10 AND (doc->>''v'')::float8 < 60 AND (doc->>''w'')::float8 > 100',
                    '(doc->>''v'')::float8 < ''NaN''', '(doc->>''v'')::float8 >= ''NaN''']) c;
SELECT compare($q$SELECT t, (doc->>'v')::float8 AS v FROM %1$s WHERE (doc->>'v')::float8 <= 'NaN' AND (doc->>'v')::float8 > 90$q$);
SELECT compare($q$SELECT x, ARRAY(SELECT max((doc->>'v')::float8) FROM %1$s WHERE t <= o.x
                                   GROUP BY date_trunc('minute', t) ORDER BY date_trunc('minute', t) DESC LIMIT 3)
                    FROM (VALUES ('2024-03-09 12:00'::timestamptz), ('2024-03-10 01:00')) o(x)$q$);
SELECT compare($q$SELECT x, ARRAY(SELECT count(*) FROM %1$s
                                   GROUP BY date_bin(o.w, t, '2024-03-09') ORDER BY date_bin(o.w, t, '2024-03-09') DESC LIMIT 2)
                    FROM (VALUES (1, interval '7 minutes'), (2, interval '1 hour')) o(x, w)$q$);
SELECT compare($q$SELECT count(*), max(n) FROM (SELECT date_trunc('hour', t) a, date_trunc('hour', t) b, count(*) n
                                                FROM %1$s GROUP BY a, b, random()) x$q$);
SELECT tscoll.create_collection('sensors', 't', 'sensor') IS NOT NULL AS created;
INSERT INTO sensors (t, sensor, doc)
SELECT '2024-01-01'::timestamptz + i * interval '1 minute', to_jsonb(i % 3 + 6), jsonb_build_object('v', i)
  FROM generate_series(1, 300) i;
SELECT count(*) AS by_meta_field FROM (SELECT * FROM sensors WHERE (doc->>'sensor')::float8 = 7) s;
SELECT count(*) AS by_time_field FROM (SELECT * FROM sensors WHERE (doc->>'v')::float8 > 100
                                                         AND (doc->>'t')::timestamptz > '2024-01-01 03:00') s;
-- date_trunc in a NULL zone is NULL: one group.
PREPARE in_zone(text) AS SELECT date_trunc('day', t, $1) AS d, count(*) FROM g GROUP BY 1;
EXECUTE in_zone(NULL);
DEALLOCATE in_zone;
-- date_bin's own errors for an infinite origin.
SELECT date_bin('1 hour', t, '-infinity'), count(*) FROM g GROUP BY 1;
-- Epoch groupings far from 1970: numeric's division rounds the last
-- microseconds of a bin into the next, as on a plain table.
CREATE TABLE far_plain AS
SELECT t, jsonb_build_object('v', i) AS doc
  FROM (SELECT '3000-01-01 00:00:00+00'::timestamptz + k * interval '1 minute' + d * interval '1 microsecond' AS t,
               row_number() OVER () AS i
          FROM generate_series(0, 30) k, unnest(ARRAY[-1, 0, 1]) d) x;
SELECT tscoll.create_collection('far', 't') IS NOT NULL AS created;
INSERT INTO far (t, doc) SELECT t, doc FROM far_plain;
SELECT count(*) AS differ FROM (
  (SELECT floor(extract(epoch from t) / 300) * 300 AS g, count(*), sum((doc->>'v')::float8) FROM far GROUP BY 1
   EXCEPT ALL
   SELECT floor(extract(epoch from t) / 300) * 300, count(*), sum((doc->>'v')::float8) FROM far_plain GROUP BY 1)
  UNION ALL
  (SELECT floor(extract(epoch from t) / 300) * 300, count(*), sum((doc->>'v')::float8) FROM far_plain GROUP BY 1
   EXCEPT ALL
   SELECT floor(extract(epoch from t) / 300) * 300 AS g, count(*), sum((doc->>'v')::float8) FROM far GROUP BY 1)) d;
SELECT g, n FROM (SELECT floor(extract(epoch from t) / 300) * 300 AS g, count(*) AS n FROM far
                   GROUP BY 1 ORDER BY 1 DESC LIMIT 3) x
EXCEPT ALL
SELECT g, n FROM (SELECT floor(extract(epoch from t) / 300) * 300 AS g, count(*) AS n FROM far_plain
                   GROUP BY 1 ORDER BY 1 DESC LIMIT 3) y;

-- A prepared statement, through its generic plan.
PREPARE by_hour(timestamptz, timestamptz) AS
SELECT date_trunc('hour', t) AS h, max((doc->>'v')::float8) AS v, count(*) AS n FROM g
 WHERE t >= $1 AND t < $2 GROUP BY 1;
SET plan_cache_mode = force_generic_plan;
CREATE TEMP TABLE prepared_result AS EXECUTE by_hour('2024-03-09 10:00', '2024-03-09 20:00');
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (h, v, n) IN (SELECT date_trunc('hour', t), max((doc->>'v')::float8), count(*)
                                            FROM gp WHERE t >= '2024-03-09 10:00' AND t < '2024-03-09 20:00'
                                            GROUP BY 1)) AS same
  FROM prepared_result;
-- A NULL bound matches nothing.
EXECUTE by_hour(NULL, '2024-03-09 20:00');
EXPLAIN (COSTS OFF) EXECUTE by_hour('2024-03-09 10:00', '2024-03-09 20:00');
RESET plan_cache_mode;
DEALLOCATE by_hour;
SELECT max((doc->>'v')::float8), count(*) FROM g WHERE t > NULL::timestamptz;

-- Not aggregated in buckets, and still right: FILTER, DISTINCT, time read
-- otherwise, another cast.
SELECT compare($q$SELECT date_trunc('hour', t), max((doc->>'v')::float8) FILTER (WHERE m->>'s' = '2') FROM %1$s GROUP BY 1$q$);
SELECT compare($q$SELECT count(DISTINCT (doc->>'v')::float8) FROM %1$s$q$);
SELECT compare($q$SELECT max(t), max((doc->>'v')::float8) FROM %1$s WHERE t < '2024-03-10'$q$);
SELECT compare($q$SELECT date_trunc('hour', t), max((doc->>'v')::numeric) FROM %1$s GROUP BY 1$q$);

-- Rows with float8 conditions: _unpack_fields drops the measurements whose
-- number fails a condition before building them; strings, decimals and
-- nulls are left to the query.
SELECT compare(format($q$SELECT t, m, (doc->>'v')::float8 AS v, (doc->>'w')::float8 AS w
                        FROM %%1$s WHERE %s$q$, c))
  FROM unnest(ARRAY['(doc->>''v'')::float8 > 50', '(doc->>''v'')::float8 <= 12.5 AND t < ''2024-03-10''',
                    '12.5 = (doc->>''v'')::float8', '(doc->>''v'')::float8 >= 99.5 AND (doc->>''w'')::float8 < 1000',
                    '(doc->>''w'')::float8 > 2400.0']) c;
-- Whole documents with float8 conditions: _unpack builds the documents of
-- the measurements that may pass them only, with the same rule.
SELECT compare(format($q$SELECT * FROM %%1$s WHERE %s$q$, c))
  FROM unnest(ARRAY['(doc->>''v'')::float8 > 50', '(doc->>''v'')::float8 <= 12.5 AND t < ''2024-03-10''',
                    '12.5 = (doc->>''v'')::float8', '(doc->>''v'')::float8 >= 99.5 AND (doc->>''w'')::float8 < 1000',
                    '(doc->>''w'')::float8 > 2400.0 AND t >= ''2024-03-09 12:00''']) c;
SELECT compare($q$SELECT t, doc FROM %1$s WHERE (doc->>'v')::float8 < -90 ORDER BY t$q$);
SELECT compare($q$SELECT t, (doc->>'v')::float8 FROM %1$s WHERE (doc->>'v')::float8 > 90 OR (doc->>'w')::float8 > 2590$q$);
-- Only the 66 measurements that pass leave _unpack_fields (w is an integer
-- or absent: nothing is left for the query's own condition to remove).
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT t, (doc->>'w')::float8 FROM g WHERE (doc->>'w')::float8 > 2400.0;
-- With a field read as text too, _unpack_fields builds every value and does
-- not apply the filters it is passed.
SELECT compare($q$SELECT t, doc->>'v' FROM %1$s WHERE (doc->>'v')::float8 > 50$q$);

-- The casts fail where the plain query's do, and only for measurements the
-- query reads: "abc" is at 00:02.
SELECT tscoll.create_collection('e', 't');
INSERT INTO e (t, doc) VALUES
    ('2024-01-01 00:01', '{"v": 1, "b": 1e308, "n": "NaN"}'),
    ('2024-01-01 00:02', '{"v": "abc", "b": 1e308, "n": 5}'),
    ('2024-01-01 00:03', '{"v": " 3 ", "b": true, "n": "-Infinity"}');
SELECT max((doc->>'v')::float8) FROM e;
SELECT max((doc->>'v')::float8) FROM e WHERE t < '2024-01-01 00:02';
SELECT max((doc->>'v')::float8), sum((doc->>'v')::float8) FROM e WHERE t > '2024-01-01 00:02';
SELECT sum((doc->>'b')::float8) FROM e WHERE t < '2024-01-01 00:03';
SELECT max((doc->>'b')::float8) FROM e;
SELECT max((doc->>'n')::float8), min((doc->>'n')::float8), avg((doc->>'n')::float8) FROM e;
SELECT t, (doc->>'n')::float8 FROM e WHERE (doc->>'n')::float8 > 0 ORDER BY t;
SELECT t FROM e WHERE (doc->>'v')::float8 > 0;
SELECT t FROM e WHERE (doc->>'v')::float8 > 2 AND t > '2024-01-01 00:02';
EXPLAIN (COSTS OFF) SELECT max((doc->>'n')::float8) FROM e WHERE t > '2024-01-01';

-- The latest groups (ORDER BY date_trunc(unit, time) DESC LIMIT k) read
-- only the buckets that reach the k-th latest group known from max_time,
-- from the buckets that reach past the upper bound and from the latest
-- bucket. The data has gaps:
-- nothing between 2024-03-10 23:59 and 2024-04-06 12:00.
SELECT compare(format($q$SELECT date_trunc(%L, t) AS g, max((doc->>'v')::float8), count(*)
                        FROM %%1$s WHERE %s GROUP BY 1 ORDER BY 1 DESC LIMIT %s$q$, unit, c, k))
  FROM unnest(ARRAY['minute', 'hour', 'day']) unit,
       unnest(ARRAY['t < ''2024-03-10 06:30''', 't <= ''2024-04-06 12:00''',
                    't >= ''2024-03-09 12:00'' AND t < ''2024-03-10 18:00''', 'true']) c,
       unnest(ARRAY['1', '7', '5 OFFSET 3']) k;
EXPLAIN (COSTS OFF)
SELECT date_trunc('minute', t), max((doc->>'v')::float8) FROM g WHERE t < '2024-03-10 06:30'
 GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
-- The buckets it reads are those reaching the 5th latest minute before
-- 06:30, from the plain table:
SELECT count(*) AS buckets_reaching_it FROM "system.buckets.g"
 WHERE max_time >= (SELECT date_trunc('minute', t) FROM gp WHERE t < '2024-03-10 06:30'
                     GROUP BY 1 ORDER BY 1 DESC OFFSET 4 LIMIT 1)
   AND min_time < '2024-03-10 06:30';
-- and those it did read (the bucket scan's rows, from EXPLAIN ANALYZE):
CREATE FUNCTION buckets_read(query text) RETURNS jsonb LANGUAGE plpgsql AS
$$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO plan;
    RETURN jsonb_path_query_array(plan, 'strict $.**?(@."Alias" == "b")."Actual Rows"');
END
$$;
SELECT buckets_read($q$SELECT date_trunc('minute', t), max((doc->>'v')::float8) FROM g
                       WHERE t < '2024-03-10 06:30' GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$);
-- Series whose buckets end at the same times (every series' hour ends at
-- :59:50) have few distinct max_time groups: the groups of the latest
-- bucket, decoded, bound the read to the last hour's 10 buckets.
SELECT tscoll.create_collection('ticks', 't', 'm', bucket_max_span_seconds => 3600,
                                bucket_rounding_seconds => 3600) IS NOT NULL AS created;
INSERT INTO ticks (t, m, doc)
SELECT '2024-03-09'::timestamptz + i * interval '10 seconds', to_jsonb(s), jsonb_build_object('v', (i * 7 + s) % 101)
  FROM generate_series(0, 6 * 360 - 1) i, generate_series(1, 10) s;
SELECT buckets_read($q$SELECT date_trunc('minute', t), max((doc->>'v')::float8) FROM ticks
                       GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$);
SELECT date_trunc('minute', t), max((doc->>'v')::float8), count(*) FROM ticks
 GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
SET tscoll.enable_bucket_pruning = off;
SELECT date_trunc('minute', t), max((doc->>'v')::float8), count(*) FROM ticks
 GROUP BY 1 ORDER BY 1 DESC LIMIT 5;
RESET tscoll.enable_bucket_pruning;
SELECT tscoll.drop_collection('ticks');

-- The same for bins: date_bin, time_bucket, and Grafana's epoch groupings
-- that order their groups as the bins (not mod(floor(...), 60), which does not).
SELECT g, c, compare(format($q$SELECT %s AS g, max((doc->>'v')::float8), count(*)
                                FROM %%1$s WHERE %s GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$, g, c))
  FROM unnest(ARRAY[$g$date_bin('7 minutes', t, '2024-03-09 00:03:30')$g$,
                    $g$tscoll.time_bucket('1 hour', t)$g$,
                    $g$floor(extract(epoch from t) / 60) * 60$g$,
                    $g$to_timestamp(floor(extract(epoch from t) / 300) * 300)$g$,
                    $g$mod(floor(extract(epoch from t) / 60)::bigint, 60)$g$]) g,
       unnest(ARRAY['t < ''2024-03-10 06:30''', 't <= ''2024-04-06 12:00''', 'true']) c;
SELECT buckets_read($q$SELECT date_bin('1 minute', t, '2000-01-01'), max((doc->>'v')::float8) FROM g
                       WHERE t < '2024-03-10 06:30' GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$);
SELECT buckets_read($q$SELECT floor(extract(epoch from t) / 60) * 60, max((doc->>'v')::float8) FROM g
                       WHERE t < '2024-03-10 06:30' GROUP BY 1 ORDER BY 1 DESC LIMIT 5$q$);

-- An object's text does not cast either; the error shows it as the view does.
INSERT INTO e (t, doc) VALUES ('2024-01-01 00:04', '{"o": {"a": 1.50, "b": [2e0]}}');
SELECT max((doc->>'o')::float8) FROM e WHERE t > '2024-01-01 00:03';
SET tscoll.enable_bucket_pruning = off;
SELECT max((doc->>'o')::float8) FROM e WHERE t > '2024-01-01 00:03';
RESET tscoll.enable_bucket_pruning;
