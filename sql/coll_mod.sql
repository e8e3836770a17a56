-- tscoll.coll_mod (SPEC §10): MongoDB's collMod sequence step by step, each
-- success with the options it leaves, each refusal with its SQLSTATE.
\i test/setup.psql
SET TimeZone = 'UTC';
SELECT tscoll.create_collection('c', 'time');
CREATE FUNCTION step(changes text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN tscoll.coll_mod('c', changes::jsonb)::text;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- options other collections have, but not time-series ones
SELECT step('{"validator": {"required": ["time"]}}');
SELECT step('{"validationLevel": "moderate"}');
SELECT step('{"validationAction": "warn"}');
SELECT step('{"viewOn": "foo", "pipeline": []}');
-- expiry
SELECT step('{"expireAfterSeconds": 60}');
SELECT step('{"expireAfterSeconds": "off"}');
SELECT step('{"expireAfterSeconds": 0}');
SELECT step('{"expireAfterSeconds": -1}');
SELECT step('{"expireAfterSeconds": "on"}');
SELECT step('{"expireAfterSeconds": {"a": 1}}');
SELECT step('{"expireAfterSeconds": 1.5}');
SELECT step('{"expireAfterSeconds": 60}');
-- granularity: only up
SELECT step('{"timeseries": {"granularity": "minutes"}}');
SELECT step('{"timeseries": {"granularity": "seconds"}}');
SELECT step('{"timeseries": {"granularity": "days"}}');
SELECT step('{"timeseries": {"granularity": 1}}');
SELECT step('{"timeseries": {"granularity": "hours"}}');
SELECT step('{"timeseries": {"granularity": "hours"}}');
-- span and rounding: together, equal, in range, never down
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 2592000}}');
SELECT step('{"timeseries": {"bucketRoundingSeconds": 86400}}');
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 86400, "bucketRoundingSeconds": 86400}}');
SELECT step('{"timeseries": {"granularity": "hours", "bucketMaxSpanSeconds": 2592000}}');
SELECT step('{"timeseries": {"granularity": "hours", "bucketMaxSpanSeconds": 2592000, "bucketRoundingSeconds": 86400}}');
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 2592001, "bucketRoundingSeconds": 86401}}');
SELECT step('{"timeseries": {"granularity": "hours", "bucketMaxSpanSeconds": 2592001, "bucketRoundingSeconds": 86401}}');
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 2592001, "bucketRoundingSeconds": 2592001}}');
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 31536001, "bucketRoundingSeconds": 31536001}}');
SELECT step('{"timeseries": {"bucketMaxSpanSeconds": 31536000, "bucketRoundingSeconds": 31536000}}');
SELECT step('{"timeseries": {"granularity": "hours"}}');
-- the time and meta fields never change; timeseries changes come alone
SELECT step('{"timeseries": {"timeField": "t"}}');
SELECT step('{"timeseries": {"metaField": "m"}}');
SELECT step('{"timeseries": {"granularity": "hours"}, "expireAfterSeconds": 1}');
-- no-ops
SELECT step('{"timeseries": {}}');
SELECT step('{}');
SELECT step('[]');
SELECT options FROM tscoll.list_collections();

-- From fixed bucketing to a granularity that is not finer.
SELECT tscoll.create_collection_from_options('f',
    '{"timeseries": {"timeField": "time", "bucketMaxSpanSeconds": 200, "bucketRoundingSeconds": 200}}');
SELECT tscoll.coll_mod('f', '{"timeseries": {"granularity": "minutes"}}');
SELECT tscoll.create_collection_from_options('f2',
    '{"timeseries": {"timeField": "time", "bucketMaxSpanSeconds": 7200, "bucketRoundingSeconds": 7200}}');
SELECT try($$SELECT tscoll.coll_mod('f2', '{"timeseries": {"granularity": "minutes"}}')$$);
SELECT tscoll.coll_mod('f2', '{"timeseries": {"granularity": "hours"}}');

-- Index changes: an index is named or given by its key pattern.
SELECT tscoll.create_collection('w', 'timestamp', 'sensor');
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"name": "nope", "hidden": true}}')$$);
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"keyPattern": {"a": 1}, "hidden": true}}')$$);
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"name": "sensor_1_timestamp_1", "expireAfterSeconds": 100}}')$$);
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"keyPattern": {"sensor": 1, "timestamp": 1}, "prepareUnique": true}}')$$);
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"name": "sensor_1_timestamp_1"}}')$$);

-- Existing buckets are never rewritten; the next new bucket uses the new
-- rounding: seconds (minute) -> minutes (hour) -> hours (day) -> fixed (30 days).
SELECT tscoll.create_collection('g', 't', 'm');
INSERT INTO g (t, m, doc) VALUES ('2024-01-01 10:31:45+00', '1', '{"n": 1}');
SELECT tscoll.coll_mod('g', '{"timeseries": {"granularity": "minutes"}}');
-- within the new one-day span of the first bucket: reopened, not a new bucket
INSERT INTO g (t, m, doc) VALUES ('2024-01-02 05:17:00+00', '1', '{"n": 2}');
INSERT INTO g (t, m, doc) VALUES ('2024-01-03 05:17:00+00', '1', '{"n": 3}');
SELECT tscoll.coll_mod('g', '{"timeseries": {"granularity": "hours"}}');
INSERT INTO g (t, m, doc) VALUES ('2024-02-15 13:45:00+00', '1', '{"n": 4}');
SELECT tscoll.coll_mod('g', '{"timeseries": {"bucketMaxSpanSeconds": 2592000, "bucketRoundingSeconds": 2592000}}');
INSERT INTO g (t, m, doc) VALUES ('2024-06-10 08:00:00+00', '1', '{"n": 5}');
SELECT control->'min'->>'t' AS min, control->'max'->>'t' AS max, control->'count' AS count
  FROM tscoll.buckets('g') ORDER BY min;
SELECT bucket_max_span_seconds, bucket_rounding_seconds, bucketing_changed
  FROM tscoll.collections WHERE view = 'g'::regclass;
-- every measurement is still there
SELECT t, doc->'n' AS n FROM g ORDER BY t;

-- Only the owner changes options; a missing collection is 42P01.
CREATE ROLE tscoll_not_owner;
GRANT SELECT ON g TO tscoll_not_owner;
SET ROLE tscoll_not_owner;
SELECT try($$SELECT tscoll.coll_mod('g', '{"expireAfterSeconds": 1}')$$);
RESET ROLE;
DROP OWNED BY tscoll_not_owner;
DROP ROLE tscoll_not_owner;
SELECT try($$SELECT tscoll.coll_mod('nope', '{}')$$);
SELECT try($$SELECT tscoll.coll_mod('tscoll.collections', '{}')$$);
-- NULL changes are refused like any non-object (42804); nothing changes.
SELECT try($$SELECT tscoll.coll_mod('g', NULL)$$);
-- An index's expireAfterSeconds is checked as create_index checks it:
-- a bad value stored here would make every TTL pass fail.
SELECT tscoll.create_index('g', '{"t": 1}',
    '{"expireAfterSeconds": 3600, "partialFilterExpression": {"m": 1}}');
SELECT try(format($$SELECT tscoll.coll_mod('g', '{"index": {"name": "t_1", "expireAfterSeconds": %s}}')$$, e))
  FROM unnest(ARRAY['"x"', '-20', '1e300', '1.5', '4611686018427387904', '{}', 'true']) e;
SELECT tscoll.coll_mod('g', '{"index": {"name": "t_1", "expireAfterSeconds": 60}}') IS NOT NULL AS changed;
SELECT options FROM tscoll.indexes WHERE collection = 'g'::regclass AND name = 't_1';
-- changes is jsonb, which loses key order: a keyPattern that two indexes
-- share up to order is refused rather than guessed; a name is exact.
SELECT tscoll.create_index('g', '{"t": 1, "m": 1}');
SELECT try($$SELECT tscoll.coll_mod('g', '{"index": {"keyPattern": {"t": 1, "m": 1}, "hidden": true}}')$$);
SELECT tscoll.coll_mod('g', '{"index": {"name": "t_1_m_1", "hidden": true}}') IS NOT NULL AS hidden;
SELECT name, options FROM tscoll.indexes WHERE collection = 'g'::regclass ORDER BY name;
