-- What clients expect of a view (SPEC §6): INSERT ... RETURNING returns
-- each measurement as stored, UPDATE/DELETE ... RETURNING the measurements
-- affected, ON CONFLICT gets tscoll's own 0A000, COPY <collection> TO
-- works; each with PostgreSQL's privileges.
\i test/setup.psql
SET timezone = 'UTC';
-- Runs a statement; returns the number of rows it reports.
CREATE FUNCTION affected(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE stmt;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
SELECT tscoll.create_collection('weather', 'ts', 'sensor', granularity => 'hours');

-- INSERT ... RETURNING: the generated _id, the time as stored (the time
-- field in doc as canonical text), the meta field in doc.
INSERT INTO weather VALUES ('2024-01-01 10:00:00.123456+00', '{"id": 1}', '{"temp": 21.5}')
RETURNING ts, sensor, doc - '_id' AS doc, doc->>'_id' ~ '^[0-9a-f]{24}$' AS generated_id;
INSERT INTO weather (doc)
VALUES ('{"ts": {"$date": "2024-01-01T10:00:01Z"}, "sensor": {"id": 1}, "temp": 3}'),
       ('{"ts": "2024-01-01T10:00:02+01:00", "sensor": {"id": 2}, "temp": 4, "_id": 7}')
RETURNING ts, sensor, doc - '_id' AS doc, doc->'_id' = '7' AS given_id;
-- What RETURNING returned is what the view reads.
CREATE TEMPORARY TABLE inserted AS
WITH i AS (
    INSERT INTO weather SELECT '2024-01-01 11:00:00+00'::timestamptz + g * interval '1 minute',
                               jsonb_build_object('id', g % 2), jsonb_build_object('temp', g)
                          FROM generate_series(1, 20) g
    RETURNING *)
SELECT * FROM i;
SELECT count(*) AS returned,
       count(*) FILTER (WHERE (ts, sensor, doc) IN (SELECT * FROM weather)) AS as_read
  FROM inserted;
-- A generic plan, as drivers prepare it.
SET plan_cache_mode = force_generic_plan;
PREPARE add(timestamptz, jsonb, jsonb) AS
    INSERT INTO weather VALUES ($1, $2, $3) RETURNING ts, doc ? '_id' AS has_id;
EXECUTE add('2024-01-01 12:00:00+00', '{"id": 1}', '{"temp": 30}');
EXECUTE add('2024-01-01 12:00:01+00', '{"id": 1}', '{"temp": 31}');
DEALLOCATE add;
RESET plan_cache_mode;

-- ON CONFLICT: tscoll's message, in any form.
INSERT INTO weather VALUES (now(), '{}', '{}') ON CONFLICT DO NOTHING;
SELECT try($$INSERT INTO weather VALUES (now(), '{}', '{}') ON CONFLICT (ts) DO UPDATE SET doc = '{}'$$);
SELECT try($$WITH x AS (INSERT INTO weather VALUES (now(), '{}', '{}') ON CONFLICT DO NOTHING RETURNING 1)
             SELECT * FROM x$$);

-- UPDATE ... RETURNING: the measurements with their new meta.
UPDATE weather SET sensor = '{"id": 3}' WHERE sensor = '{"id": 2}' RETURNING ts, sensor, doc;
UPDATE weather SET sensor = sensor || '{"moved": true}' WHERE sensor = '{"id": 0}'
RETURNING ts, sensor->'moved' AS moved, (doc->>'temp')::numeric AS temp;
-- DELETE ... RETURNING, as they were: a whole series, a time range, a
-- condition on measurements (a bucket rewritten without them).
DELETE FROM weather WHERE sensor = '{"id": 3}' RETURNING *;
DELETE FROM weather WHERE ts >= '2024-01-01 12:00:00+00' RETURNING ts, doc->'temp' AS temp;
DELETE FROM weather WHERE (doc->>'temp')::numeric BETWEEN 5 AND 9 RETURNING ts, sensor, doc - '_id' AS doc;
SELECT count(*), sum((doc->>'temp')::numeric) FROM weather;
-- The reported count is the measurements', with or without RETURNING.
SELECT affected($$UPDATE weather SET sensor = '{"id": 1}' WHERE sensor = '{"id": 1}' RETURNING ts$$),
       affected($$UPDATE weather SET sensor = '{"id": 1}' WHERE sensor = '{"id": 1}'$$);
SELECT affected($$DELETE FROM weather WHERE (doc->>'temp')::numeric > 17 RETURNING ts$$);
-- A generic plan.
SET plan_cache_mode = force_generic_plan;
PREPARE drop_at(timestamptz) AS DELETE FROM weather WHERE ts = $1 RETURNING doc->'temp';
EXECUTE drop_at('2024-01-01 11:01:00+00');
EXECUTE drop_at('2024-01-01 11:01:00+00');
DEALLOCATE drop_at;
RESET plan_cache_mode;
EXPLAIN (COSTS OFF) DELETE FROM weather WHERE sensor = '{"id": 1}' RETURNING ts;
-- What RETURNING cannot read: other tables, subqueries, whole rows.
SELECT try($$DELETE FROM weather USING (VALUES (1)) v (a) WHERE sensor = '{"id": 9}' RETURNING v.a$$);
SELECT try($$DELETE FROM weather WHERE sensor = '{"id": 9}' RETURNING (SELECT 1)$$);
SELECT try($$UPDATE weather SET sensor = '{}' WHERE sensor = '{"id": 9}' RETURNING weather$$);

-- COPY <collection> TO: every format, a column list; COPY FROM unchanged.
SELECT tscoll.create_collection('small', 'ts', 'sensor');
INSERT INTO small VALUES ('2024-01-01 00:00:00+00', '{"id": 1}', '{"_id": 1, "temp": 1.5}'),
                         ('2024-01-01 00:00:01+00', NULL, '{"_id": 2, "note": "a\tb"}');
COPY small TO STDOUT;
COPY small (sensor, ts) TO STDOUT (FORMAT csv, HEADER);
SELECT tscoll.create_collection('copied', 'ts', 'sensor');
COPY weather TO '/tmp/tscoll_returning_copy.bin' (FORMAT binary);
COPY copied FROM '/tmp/tscoll_returning_copy.bin' (FORMAT binary);
SELECT (SELECT count(*) FROM copied) AS copied,
       (SELECT count(*) FROM (SELECT * FROM weather EXCEPT SELECT * FROM copied) x) AS differing;

-- Privileges: RETURNING and COPY TO read, and need SELECT as on any view.
CREATE ROLE tscoll_writer;
GRANT INSERT, UPDATE, DELETE ON weather TO tscoll_writer;
SET ROLE tscoll_writer;
SELECT try($$INSERT INTO weather VALUES ('2024-01-02 00:00:00+00', '{"id": 5}', '{"temp": 1}')$$);
SELECT try($$INSERT INTO weather VALUES ('2024-01-02 00:00:00+00', '{"id": 5}', '{"temp": 1}') RETURNING doc$$);
SELECT try($$DELETE FROM weather RETURNING ts$$);
SELECT try($$UPDATE weather SET sensor = '{"id": 6}' RETURNING ts$$);
COPY weather TO STDOUT;
RESET ROLE;
GRANT SELECT ON weather TO tscoll_writer;
SET ROLE tscoll_writer;
DELETE FROM weather WHERE sensor = '{"id": 5}' RETURNING ts, doc->'temp' AS temp;
RESET ROLE;
DROP OWNED BY tscoll_writer;
DROP ROLE tscoll_writer;

-- RETURNING expressions are planned as any: default and named arguments.
INSERT INTO weather VALUES ('2024-01-03 00:00:00+00', '{"id": 7}', '{"temp": 7.5}'),
                           ('2024-01-03 00:00:01+00', '{"id": 7}', '{"temp": 8.5}');
DELETE FROM weather WHERE sensor = '{"id": 7}'
RETURNING jsonb_path_query_first(doc, '$.temp') AS temp, make_interval(secs => 1) AS second;
-- A collection without a meta field returns its doc.
SELECT tscoll.create_collection('plain', 'ts');
INSERT INTO plain VALUES ('2024-01-01 00:00:00+00', '{"_id": 1, "v": 1}') RETURNING *;
INSERT INTO plain (doc) VALUES ('{"_id": 2, "ts": "2024-01-01T00:00:01Z"}') RETURNING ts, doc;

-- Through a view of the user's over a collection, the collection's rules
-- do what a rule can: whole buckets; the rest is refused, also in WITH.
CREATE VIEW weather_too AS SELECT * FROM weather;
INSERT INTO weather VALUES ('2024-01-04 00:00:00+00', '{"id": 8}', '{"temp": 1}'),
                           ('2024-01-04 00:00:01+00', '{"id": 8}', '{"temp": 2}'),
                           ('2024-01-04 00:00:00+00', '{"id": 9}', '{"temp": 3}');
SELECT try($$DELETE FROM weather_too WHERE (doc->>'temp')::numeric = 1$$);
SELECT try($$WITH d AS (DELETE FROM weather_too WHERE (doc->>'temp')::numeric = 1) SELECT 1$$);
SELECT try($$DELETE FROM weather_too WHERE sensor = '{"id": 8}' AND doc ? 'temp'
               AND (doc->>'temp') IN (SELECT doc->>'temp' FROM weather)$$);
SELECT sensor, count(*) FROM weather WHERE sensor @> '{"id": 8}' OR sensor @> '{"id": 9}' GROUP BY 1 ORDER BY 1;
SELECT affected($$DELETE FROM weather_too WHERE sensor = '{"id": 8}'$$);
SELECT affected($$UPDATE weather_too SET sensor = '{"id": 10}' WHERE sensor = '{"id": 9}'$$);
SELECT sensor, count(*) FROM weather WHERE sensor @> '{"id": 8}' OR sensor @> '{"id": 10}' GROUP BY 1 ORDER BY 1;
DROP VIEW weather_too;
-- The rules' functions refuse NULL arguments, or return NULL.
SELECT try($$SELECT tscoll._rule_match(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true)$$);
SELECT tscoll._untranslated_returning(NULL, NULL) IS NULL AS strict;
