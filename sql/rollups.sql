-- Rollups (SPEC §15): the scenario of the pre-aggregation article in
-- ../shared/seeds: readings per minute of two series (location x
-- scientist) for a month, rolled up per minute, hour, day and month, each
-- level built on the one below. Every rollup row must equal the same
-- aggregates computed from the measurements with plain SQL, whatever was
-- stored and whatever was computed at read time: after bulk and single
-- inserts, late data, deletes, meta updates, refreshes and TTL.
\i test/setup.psql
SET TimeZone = 'Asia/Tokyo';  -- buckets are in UTC whatever the session's zone

SELECT tscoll.create_collection('readings', 'ts', 'sensor', 'minutes');
-- the first half of February 2024: integral temperatures, so that sums are exact
INSERT INTO readings (ts, sensor, doc)
SELECT timestamptz '2024-02-01 00:00+00' + i * interval '1 minute',
       jsonb_build_object('location', l, 'scientist', s),
       jsonb_build_object('temp', (i * 7 + n) % 41 - 10, 'hum', (i + n) % 100)
  FROM generate_series(0, 14 * 1440 - 1) i,
       (VALUES ('paris', 'curie', 1), ('oslo', 'abel', 2)) v(l, s, n);

SELECT tscoll.create_rollup('per_minute', 'readings', '1 minute', '["location", "scientist"]',
                            '{"temp": ["count", "sum", "min", "max", "avg", "first", "last"]}');
SELECT tscoll.create_rollup('per_hour', 'per_minute', '1 hour', '["location", "scientist"]',
                            '{"temp": ["count", "sum", "min", "max", "avg", "first", "last"]}');
SELECT tscoll.create_rollup('per_day', 'per_hour', '1 day', '["location"]',
                            '{"temp": ["count", "avg", "max", "first", "last"]}');
SELECT tscoll.create_rollup('per_month', 'per_day', 'month', '[]', '{"temp": ["max", "last"]}');
\d per_hour
SELECT * FROM tscoll.list_rollups();
SELECT * FROM per_month;

CREATE FUNCTION tscoll_explain_lines(query text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        RETURN NEXT line;
    END LOOP;
END $$;
-- The same aggregates from the measurements, in plain SQL.
CREATE FUNCTION temp(doc jsonb) RETURNS float8 LANGUAGE sql IMMUTABLE AS
$$ SELECT CASE WHEN jsonb_typeof(doc -> 'temp') = 'number' THEN (doc ->> 'temp')::float8 END $$;
CREATE VIEW raw_hour AS
SELECT date_bin('1 hour', ts, '1970-01-01 00:00+00') AS ts, sensor -> 'location' AS location,
       sensor -> 'scientist' AS scientist, count(*) AS count,
       count(temp(doc)) AS temp_count, sum(temp(doc)) AS temp_sum, min(temp(doc)) AS temp_min,
       max(temp(doc)) AS temp_max, avg(temp(doc)) AS temp_avg,
       (array_agg(temp(doc) ORDER BY ts) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_first,
       (array_agg(temp(doc) ORDER BY ts DESC) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_last
  FROM readings GROUP BY 1, 2, 3;
CREATE VIEW raw_minute AS
SELECT date_bin('1 minute', ts, '1970-01-01 00:00+00') AS ts, sensor -> 'location' AS location,
       sensor -> 'scientist' AS scientist, count(*) AS count,
       count(temp(doc)) AS temp_count, sum(temp(doc)) AS temp_sum, min(temp(doc)) AS temp_min,
       max(temp(doc)) AS temp_max, avg(temp(doc)) AS temp_avg,
       (array_agg(temp(doc) ORDER BY ts) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_first,
       (array_agg(temp(doc) ORDER BY ts DESC) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_last
  FROM readings GROUP BY 1, 2, 3;
CREATE VIEW raw_day AS
SELECT date_trunc('day', ts, 'UTC') AS ts, sensor -> 'location' AS location, count(*) AS count,
       count(temp(doc)) AS temp_count, avg(temp(doc)) AS temp_avg, max(temp(doc)) AS temp_max,
       (array_agg(temp(doc) ORDER BY ts) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_first,
       (array_agg(temp(doc) ORDER BY ts DESC) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_last
  FROM readings GROUP BY 1, 2;
CREATE VIEW raw_month AS
SELECT date_trunc('month', ts, 'UTC') AS ts, count(*) AS count, max(temp(doc)) AS temp_max,
       (array_agg(temp(doc) ORDER BY ts DESC) FILTER (WHERE temp(doc) IS NOT NULL))[1] AS temp_last
  FROM readings GROUP BY 1;
-- Rows of the rollup missing from the raw aggregates and the other way round.
CREATE FUNCTION differences(rollup text, raw text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT * FROM %1$s EXCEPT ALL SELECT * FROM %2$s)
                                          UNION ALL (SELECT * FROM %2$s EXCEPT ALL SELECT * FROM %1$s)) x',
                   rollup, raw) INTO n;
    RETURN n;
END $$;
CREATE FUNCTION check_rollups() RETURNS TABLE (rollup text, rows bigint, differences bigint)
LANGUAGE sql AS $$
SELECT 'per_minute', (SELECT count(*) FROM per_minute), differences('per_minute', 'raw_minute')
UNION ALL SELECT 'per_hour', (SELECT count(*) FROM per_hour), differences('per_hour', 'raw_hour')
UNION ALL SELECT 'per_day', (SELECT count(*) FROM per_day), differences('per_day', 'raw_day')
UNION ALL SELECT 'per_month', (SELECT count(*) FROM per_month), differences('per_month', 'raw_month')
$$;
-- Which buckets each rollup computes at read time.
CREATE VIEW changes AS
SELECT replace(rollup::text, 'system.rollups.', '') AS rollup, count(*) AS buckets
  FROM tscoll.rollup_changes GROUP BY 1 ORDER BY 1;
SELECT * FROM check_rollups();

-- Single rows at the end of the data, the rest of the month in bulk, then
-- through insert_many.
INSERT INTO readings (ts, sensor, doc)
VALUES ('2024-02-15 00:00+00', '{"location": "paris", "scientist": "curie"}', '{"temp": 5}');
INSERT INTO readings (ts, sensor, doc)
VALUES ('2024-02-15 00:00:30+00', '{"location": "paris", "scientist": "curie"}', '{"temp": 7}');
INSERT INTO readings (ts, sensor, doc)
SELECT timestamptz '2024-02-15 00:01+00' + i * interval '1 minute',
       jsonb_build_object('location', l, 'scientist', s),
       jsonb_build_object('temp', (i * 3 + n) % 37 - 5)
  FROM generate_series(0, 14 * 1440) i, (VALUES ('paris', 'curie', 1), ('oslo', 'abel', 2)) v(l, s, n);
SELECT tscoll.insert_many('readings', '[{"ts": {"$date": "2024-02-29T23:59:30Z"}, "sensor": {"location": "oslo", "scientist": "abel"}, "temp": 40}]');
SELECT * FROM changes;
SELECT * FROM check_rollups();
SELECT tscoll.refresh_rollups() > 0 AS refreshed;
SELECT * FROM changes;
SELECT * FROM check_rollups();

-- Late and out-of-order data, a field that is not a number, a new series:
-- noted as changes, computed at read time until the next refresh stores
-- them.
INSERT INTO readings (ts, sensor, doc) VALUES
    ('2024-02-03 10:00:30+00', '{"location": "paris", "scientist": "curie"}', '{"temp": 100}'),
    ('2024-02-03 10:00:40+00', '{"location": "paris", "scientist": "curie"}', '{"temp": "hot"}'),
    ('2024-02-01 00:00:10+00', '{"location": "paris", "scientist": "curie"}', '{"hum": 3}'),
    ('2024-02-07 07:07:07+00', '{"location": "rome", "scientist": "volta"}', '{"temp": -40}');
SELECT * FROM changes;
SELECT * FROM check_rollups();
SELECT * FROM per_day WHERE location = '"rome"';
SELECT tscoll.refresh_rollups() > 0 AS refreshed;
SELECT * FROM check_rollups();

-- Deletes (by series and time, by measurement value) and a meta update
-- recompute the buckets they touch.
DELETE FROM readings WHERE sensor ->> 'location' = 'oslo'
                       AND ts >= '2024-02-10 00:00+00' AND ts < '2024-02-10 06:00+00';
SELECT * FROM check_rollups();
DELETE FROM readings WHERE tscoll._as_float8(doc -> 'temp') > 29 AND ts < '2024-02-02 00:00+00';
SELECT * FROM check_rollups();
UPDATE readings SET sensor = '{"location": "paris", "scientist": "langevin"}'
 WHERE sensor = '{"location": "rome", "scientist": "volta"}';
SELECT * FROM per_hour WHERE scientist = '"langevin"';
SELECT * FROM check_rollups();
SELECT tscoll.refresh_rollups() > 0 AS refreshed;
SELECT * FROM changes;
SELECT * FROM check_rollups();
-- A read scans the stored states and calls for the others.
SELECT count(*) AS plan_lines FROM (SELECT tscoll_explain_lines('SELECT * FROM per_day') l) x
 WHERE l ~ 'Seq Scan on "system.rollups.per_day"|Function Scan on _rollup_live';

-- A rollup is what the reader's snapshot holds: the transaction's own
-- writes, and nothing of them once rolled back.
BEGIN;
INSERT INTO readings (ts, sensor, doc)
VALUES ('2024-02-20 12:00:01+00', '{"location": "oslo", "scientist": "abel"}', '{"temp": 123}');
SELECT temp_max FROM per_month;
SELECT * FROM changes;
SELECT * FROM check_rollups();
ROLLBACK;
SELECT temp_max FROM per_month;
SELECT * FROM changes;
SELECT * FROM check_rollups();

-- A change inside a subtransaction that rolls back keeps the notes of the
-- statement around it.
CREATE FUNCTION delete_and_fail(day timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        DELETE FROM readings WHERE ts >= day AND ts < day + interval '1 hour';
        RAISE EXCEPTION 'undo';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    RETURN true;
END $$;
DELETE FROM "system.buckets.readings" WHERE min_time < '2024-02-01 12:00+00'
                                         AND delete_and_fail('2024-02-06 00:00+00');
SELECT * FROM check_rollups();
SELECT tscoll.refresh_rollups() > 0 AS refreshed;
SELECT * FROM check_rollups();

-- A note that is not a bucket's start changes nothing.
INSERT INTO tscoll.rollup_changes VALUES ('"system.rollups.per_hour"', '2024-02-02 00:30+00');
SELECT * FROM check_rollups();
SELECT tscoll.refresh_rollups() > 0 AS refreshed;
SELECT * FROM check_rollups();

-- TTL on the source: the rollups keep the buckets whose measurements the
-- collection expired, and equal the measurements' aggregates wherever the
-- collection still holds a bucket whole.
CREATE TEMP TABLE kept AS
SELECT (SELECT count(*) FROM per_minute WHERE ts < '2024-02-10 00:00+00') AS minutes,
       (SELECT count(*) FROM per_hour WHERE ts < '2024-02-10 00:00+00') AS hours,
       (SELECT count(*) FROM per_day WHERE ts < '2024-02-10 00:00+00') AS days,
       (SELECT count FROM per_month) AS month_count;
-- The pass gives up on a collection whose rollup it cannot lock within
-- 200 ms (the monitor comes back), as when autovacuum is working on the
-- rollup just refreshed: not here.
SELECT format('ALTER TABLE %s SET (autovacuum_enabled = off)', storage) FROM tscoll.rollups ORDER BY storage::text \gexec
SELECT tscoll.coll_mod('readings', '{"expireAfterSeconds": 864000}') IS NOT NULL AS ttl_set;
SELECT tscoll.run_ttl_pass('2024-02-20 00:00+00') > 0 AS expired;
SELECT min(ts) >= '2024-02-09 00:00+00' AS measurements_expired FROM readings;
SELECT (SELECT count(*) FROM per_minute WHERE ts < '2024-02-10 00:00+00') = minutes AS minutes_kept,
       (SELECT count(*) FROM per_hour WHERE ts < '2024-02-10 00:00+00') = hours AS hours_kept,
       (SELECT count(*) FROM per_day WHERE ts < '2024-02-10 00:00+00') = days AS days_kept,
       (SELECT count FROM per_month) = month_count AS month_kept
  FROM kept;
SELECT differences('(SELECT * FROM per_minute WHERE ts >= ''2024-02-10 00:00+00'') m',
                   '(SELECT * FROM raw_minute WHERE ts >= ''2024-02-10 00:00+00'') r') AS minute_differences,
       differences('(SELECT * FROM per_hour WHERE ts >= ''2024-02-10 00:00+00'') h',
                   '(SELECT * FROM raw_hour WHERE ts >= ''2024-02-10 00:00+00'') r') AS hour_differences,
       differences('(SELECT * FROM per_day WHERE ts >= ''2024-02-10 00:00+00'') d',
                   '(SELECT * FROM raw_day WHERE ts >= ''2024-02-10 00:00+00'') r') AS day_differences;
SELECT tscoll.coll_mod('readings', '{"expireAfterSeconds": "off"}') IS NOT NULL AS ttl_off;

-- Errors (22023 for the arguments, 42P07 for a name in use).
SELECT try($$SELECT tscoll.create_rollup('x', 'pg_class', '1 hour', '[]', '{"v": ["sum"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'fortnight', '[]', '{"temp": ["sum"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', '2 months', '[]', '{"temp": ["sum"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', '-1 hour', '[]', '{"temp": ["sum"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'per_hour', '1 minute', '[]', '{"temp": ["sum"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'per_hour', '90 minutes', '[]', '{"temp": ["sum"]}')$$);
SELECT tscoll.create_rollup('x', 'per_hour', '1 week', '[]', '{"temp": ["sum"]}');  -- 168 hours
SELECT tscoll.drop_rollup('x');
SELECT try($$SELECT tscoll.create_rollup('x', 'per_day', 'day', '[]', '{"temp": ["min"]}')$$);
SELECT tscoll.create_rollup('x', 'per_day', 'day', '[]', '{"temp": ["sum"]}');  -- avg's sum
SELECT tscoll.drop_rollup('x');
SELECT try($$SELECT tscoll.create_rollup('x', 'per_day', 'day', '[]', '{"hum": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'per_day', 'day', '["scientist"]', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'per_day', 'day', NULL, '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'day', '[]', '{"temp": ["median"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'day', '[]', '{"ts": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'day', '{"a": 1}', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'day', '["count"]', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('x', 'readings', 'day', '[]', '{"temp": ["max"]}', '{"ttl": 1}')$$);
SELECT try($$SELECT tscoll.create_rollup('per_hour', 'readings', 'day', '[]', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.create_rollup('raw_hour', 'readings', 'day', '[]', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.drop_rollup('per_day')$$);
SELECT try($$SELECT tscoll.drop_rollup('readings')$$);

-- Privileges follow the collection's: whoever may read it reads its
-- rollups, nobody else.
SET client_min_messages = warning;
DROP ROLE IF EXISTS rollup_reader;
DROP ROLE IF EXISTS rollup_stranger;
RESET client_min_messages;
CREATE ROLE rollup_reader;
CREATE ROLE rollup_stranger;
GRANT SELECT ON readings TO rollup_reader;
SET ROLE rollup_reader;
SELECT count(*) > 0 AS reads FROM per_day;
SELECT count(*) AS listed FROM tscoll.list_rollups();
SET ROLE rollup_stranger;
SELECT try('SELECT count(*) FROM per_day');
SELECT try('SELECT count(*) FROM "system.rollups.per_day"');
SELECT count(*) AS listed FROM tscoll.list_rollups();
SELECT try($$SELECT tscoll.create_rollup('mine', 'readings', 'day', '[]', '{"temp": ["max"]}')$$);
SELECT try($$SELECT tscoll.drop_rollup('per_month')$$);
-- the catalog takes rows only for a collection of one's own, with objects
-- of its owner: nobody makes the TTL pass act on their tables
RESET ROLE;
CREATE TABLE mine (t timestamptz);
ALTER TABLE mine OWNER TO rollup_stranger;
SET ROLE rollup_stranger;
SELECT try($$INSERT INTO tscoll.rollups VALUES ('mine', 'mine', 'mine', 'readings', 'readings',
                                                '1 hour', NULL, 3600, NULL, '{}', '{"expireAfterSeconds": 0}')$$);
SELECT try($$INSERT INTO tscoll.rollup_changes VALUES ('"system.rollups.per_hour"', '2024-02-02 00:00+00')$$);
DROP TABLE mine;
RESET ROLE;
REVOKE SELECT ON readings FROM rollup_reader;

-- A rollup of the whole meta value on one of the whole meta value; TRUNCATE
-- of the bucket table is noted like a DELETE.
SELECT tscoll.create_collection('small', 't', 'm');
INSERT INTO small (t, m, doc) SELECT timestamptz '2024-01-01 00:00+00' + i * interval '1 minute',
                                     jsonb_build_object('k', i % 2), jsonb_build_object('v', i)
                                FROM generate_series(0, 299) i;
SELECT tscoll.create_rollup('small_hourly', 'small', '1 hour', NULL, '{"v": ["sum"]}');
SELECT tscoll.create_rollup('small_daily', 'small_hourly', 'day', NULL, '{"v": ["sum"]}');
SELECT * FROM small_daily ORDER BY m::text;
TRUNCATE "system.buckets.small";
SELECT count(*) AS rows_after_truncate FROM small_daily;
SELECT tscoll.refresh_rollups() >= 0 AS refreshed;
SELECT count(*) AS rows_after_truncate FROM small_daily;
SELECT tscoll.drop_collection('small');

-- Calendar weeks start on Monday, in UTC.
SELECT tscoll.create_rollup('per_week', 'per_day', 'week', '["location"]', '{"temp": ["count"]}');
SELECT ts AT TIME ZONE 'UTC' AS monday_utc, to_char(ts AT TIME ZONE 'UTC', 'Dy') AS day, location, count
  FROM per_week ORDER BY 1, 3;
SELECT tscoll.drop_rollup('per_week');

-- TTL: the collection's expiry does not shrink its rollups; a rollup's
-- own expireAfterSeconds does.
SELECT tscoll.create_collection('meter', 't', 'm', bucket_max_span_seconds => 3600,
                                bucket_rounding_seconds => 3600, expire_after_seconds => 86400);
INSERT INTO meter (t, m, doc)
SELECT timestamptz '2024-01-01 00:00+00' + i * interval '10 minutes', '"a"', jsonb_build_object('kwh', 1)
  FROM generate_series(0, 6 * 24 * 10 - 1) i;
SELECT tscoll.create_rollup('meter_daily', 'meter', '1 day', NULL, '{"kwh": ["sum"]}',
                            '{"expireAfterSeconds": 432000}');
SELECT tscoll.run_ttl_pass('2024-01-11 00:00+00');
SELECT min(t) AS oldest_measurement FROM meter;
SELECT count(*) AS days, sum(kwh_sum) AS kwh FROM meter_daily;
-- a late reading in an expired day is noted; the refresh recomputes that
-- day from what is left of it
INSERT INTO meter (t, m, doc) VALUES ('2024-01-06 12:00+00', '"a"', '{"kwh": 1}');
SELECT count(*) AS days, sum(kwh_sum) AS kwh FROM meter_daily;
SELECT tscoll.run_ttl_pass('2024-01-13 00:00+00');
SELECT t::date AS day, count, kwh_sum FROM meter_daily ORDER BY 1;

-- Dropping: a rollup with rollups on it is dropped after them; the
-- collection takes its rollups along; so does DROP VIEW of a rollup.
SELECT tscoll.drop_rollup('per_month');
SELECT tscoll.drop_rollup('per_day');
SELECT count(*) AS rollups FROM tscoll.rollups;
DROP VIEW per_hour;
SELECT rollup FROM tscoll.rollups;
SELECT relname FROM pg_class WHERE relname LIKE 'system.rollups.%' ORDER BY 1;
DROP VIEW raw_minute, raw_hour, raw_day, raw_month;
SELECT tscoll.drop_collection('readings');
SELECT count(*) AS rollups FROM tscoll.rollups;
SELECT count(*) AS triggers FROM pg_trigger WHERE tgname LIKE 'tscoll_rollups_%';
SELECT relname FROM pg_class WHERE relname LIKE 'system.rollups.%' ORDER BY 1;
DROP ROLE rollup_reader;
DROP ROLE rollup_stranger;
