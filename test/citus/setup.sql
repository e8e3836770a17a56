-- Two collections with the same TSBS-like readings (HOSTS hosts, one
-- reading every 10 s for HOURS hours, time-major, 10 tags and 10 metrics):
-- cpu is distributed before it is written (8 shards) and written through
-- INSERT ... SELECT, COPY and insert_many; cpu_local stays on the
-- coordinator and is written in one INSERT ... SELECT.
\set ON_ERROR_STOP 1
SET client_min_messages = error;
CREATE TABLE readings AS
SELECT '2016-01-01 00:00:00+00'::timestamptz + s * interval '10 s' AS time,
       jsonb_build_object('hostname', 'host_' || h, 'region', 'region_' || h % 3,
                          'datacenter', 'dc_' || h % 5, 'rack', (h % 7)::text, 'os', 'Ubuntu16.10',
                          'arch', 'x64', 'team', 'team_' || h % 4, 'service', (h % 9)::text,
                          'service_version', (h % 2)::text, 'service_environment', 'production')
           AS tags,
       (SELECT jsonb_object_agg(m, round((abs(hashtext(m || ':' || h || ':' || s)) % 10000) / 100.0, 2))
          FROM unnest(ARRAY['usage_user', 'usage_system', 'usage_idle', 'usage_nice',
                            'usage_iowait', 'usage_irq', 'usage_softirq', 'usage_steal',
                            'usage_guest', 'usage_guest_nice']) m) AS doc,
       s, h
  FROM generate_series(0, :hours * 360 - 1) s, generate_series(0, :hosts - 1) h
 ORDER BY s, h;

CREATE TABLE bench_hosts AS SELECT h AS id, 'host_' || h AS hostname FROM generate_series(0, :hosts - 1) h;

SELECT tscoll.create_collection('cpu', 'time', 'tags') \g /dev/null
SELECT tscoll.distribute_collection('cpu', 8) \g /dev/null
SELECT tscoll.create_collection('cpu_local', 'time', 'tags') \g /dev/null

INSERT INTO cpu_local SELECT time, tags, doc FROM readings ORDER BY s, h;
-- the first half in one INSERT ... SELECT
INSERT INTO cpu SELECT time, tags, doc FROM readings WHERE s < :hours * 180 ORDER BY s, h;
-- the next quarter by COPY
CREATE VIEW copied AS
SELECT time, tags, doc FROM readings WHERE s >= :hours * 180 AND s < :hours * 270 ORDER BY s, h;
\copy (SELECT * FROM copied) TO 'copy.txt'
\copy cpu (time, tags, doc) FROM 'copy.txt'
-- the rest by insert_many, an hour at a time
SELECT sum((tscoll.insert_many('cpu', docs)->>'nInserted')::bigint)
  FROM (SELECT s / 360 AS hour,
               jsonb_agg(doc || jsonb_build_object('time', time, 'tags', tags) ORDER BY s, h) AS docs
          FROM readings WHERE s >= :hours * 270 GROUP BY 1) batches \g /dev/null
-- a few single rows (tails of open buckets), in both
INSERT INTO cpu SELECT time + interval '1 s', tags, doc FROM readings
 WHERE s > :hours * 360 - 4 ORDER BY s, h;
INSERT INTO cpu_local SELECT time + interval '1 s', tags, doc FROM readings
 WHERE s > :hours * 360 - 4 ORDER BY s, h;

-- Results compared row by row and value by value: numbers within 1e-9
-- relative (sums of floats add up in another order on 8 shards), and
-- documents but for their _id.
CREATE FUNCTION same_value(a jsonb, b jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS
$$
SELECT CASE WHEN jsonb_typeof(a) = 'number' AND jsonb_typeof(b) = 'number'
            THEN abs(a::numeric - b::numeric) <= 1e-9 * greatest(1, abs(a::numeric))
            WHEN jsonb_typeof(a) = 'object' AND jsonb_typeof(b) = 'object'
            THEN a - '_id' = b - '_id'
            ELSE a IS NOT DISTINCT FROM b END
$$;
CREATE FUNCTION same_row(a jsonb, b jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE AS
$$
SELECT NOT EXISTS (SELECT FROM jsonb_each(a) x FULL JOIN jsonb_each(b) y USING (key)
                    WHERE NOT coalesce(same_value(x.value, y.value), false))
$$;
CREATE FUNCTION same_results(x text, y text) RETURNS boolean LANGUAGE plpgsql AS
$$
DECLARE
    different record;
    rows_x bigint;
    rows_y bigint;
BEGIN
    -- Materialised first, rows numbered in the order the queries gave them:
    -- Citus does not keep a subquery's order for what is above it.
    EXECUTE format('CREATE TEMP TABLE result_x AS %s', x);
    EXECUTE format('CREATE TEMP TABLE result_y AS %s', y);
    CREATE TEMP TABLE rows_x AS SELECT row_number() OVER (ORDER BY ctid) AS n, to_jsonb(r) AS j FROM result_x r;
    CREATE TEMP TABLE rows_y AS SELECT row_number() OVER (ORDER BY ctid) AS n, to_jsonb(r) AS j FROM result_y r;
    SELECT count(*) INTO rows_x FROM rows_x;
    SELECT count(*) INTO rows_y FROM rows_y;
    SELECT n, a.j AS jx, b.j AS jy INTO different
      FROM rows_x a FULL JOIN rows_y b USING (n)
     WHERE NOT coalesce(same_row(a.j, b.j), false) ORDER BY n LIMIT 1;
    DROP TABLE result_x, result_y, rows_x, rows_y;
    IF rows_x = 0 OR rows_x <> rows_y THEN
        RAISE WARNING 'rows: % against %', rows_x, rows_y;
        RETURN false;
    END IF;
    IF different.n IS NOT NULL THEN
        RAISE WARNING 'row %: % against %', different.n, different.jx, different.jy;
        RETURN false;
    END IF;
    RETURN true;
END
$$;
