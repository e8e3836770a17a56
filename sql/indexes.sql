-- Indexes (SPEC §8): MongoDB key patterns translated to bucket-table
-- indexes, the option rules, listing, dropping, hiding, and their use.
\i test/setup.psql
SELECT tscoll.create_collection('w', 'timestamp', 'sensor');
-- The bucket-table index behind each listed index.
CREATE FUNCTION defs(c regclass) RETURNS TABLE (name text, definition text) LANGUAGE sql AS $$
    SELECT i.name, coalesce(regexp_replace(pg_get_indexdef(x.oid), '^.* USING btree ', ''), '(hidden)')
      FROM tscoll.indexes i
      LEFT JOIN pg_class x ON x.relname = i.bucket_index AND x.relnamespace = 'public'::regnamespace
     WHERE i.collection = c ORDER BY i.position $$;

-- The translation table.
SELECT tscoll.create_index('w', '{"timestamp": 1}');
SELECT tscoll.create_index('w', '{"timestamp": -1}');
SELECT tscoll.create_index('w', '{"sensor.sensorId": 1}');
SELECT tscoll.create_index('w', '{"sensor.a.b": -1}');
SELECT tscoll.create_index('w', '{"temp": 1}');
SELECT tscoll.create_index('w', '{"temp": -1, "sensor": 1}');
-- key order is kept, in the name too
SELECT tscoll.create_index('w', '{"sensor.sensorId": 1, "timestamp": -1}');
SELECT tscoll.create_index('w', '{"timestamp": -1, "sensor.sensorId": 1}');
SELECT * FROM defs('w');
SELECT * FROM tscoll.list_indexes('w');

-- Options: name, hidden, partialFilterExpression, expireAfterSeconds.
SELECT tscoll.create_index('w', '{"sensor.region": 1}', '{"name": "by_region"}');
SELECT tscoll.create_index('w', '{"sensor.kind": 1}',
    '{"partialFilterExpression": {"sensor.region": {"$in": ["eu", "us"]}, "$and": [{"sensor.id": {"$gt": 5}}, {"sensor.x": {"$exists": false}}]}}');
-- (w has both time indexes already: the same keys with other options are 42P07)
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1}', '{"name": "ttl_eu", "expireAfterSeconds": 3600, "partialFilterExpression": {"sensor.region": "eu"}}')$$);
SELECT tscoll.create_collection('w_ttl', 'timestamp', 'sensor');
SELECT tscoll.create_index('w_ttl', '{"timestamp": 1}',
    '{"name": "ttl_eu", "expireAfterSeconds": 3600, "partialFilterExpression": {"sensor.region": "eu"}}');
SELECT * FROM defs('w_ttl');
SELECT * FROM tscoll.list_indexes('w_ttl');
SELECT tscoll.create_index('w', '{"sensor.unit": 1}', '{"hidden": true}');
SELECT * FROM defs('w') WHERE name IN ('by_region', 'sensor.kind_1', 'ttl_eu', 'sensor.unit_1');
SELECT i FROM tscoll.list_indexes('w') i WHERE i->>'name' IN ('by_region', 'sensor.kind_1', 'ttl_eu', 'sensor.unit_1');

-- Partial TTL rules (SPEC §9) and unknown options: 22023.
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1, "sensor": 1}', '{"expireAfterSeconds": 1, "partialFilterExpression": {"sensor": 1}}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"sensor": 1}', '{"expireAfterSeconds": 1, "partialFilterExpression": {"sensor": 1}}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1}', '{"expireAfterSeconds": 1}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1}', '{"expireAfterSeconds": 1, "partialFilterExpression": {"sensor": 1}}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1}', '{"expireAfterSeconds": 1, "partialFilterExpression": {"temp": 1}}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"timestamp": 1}', '{"expireAfterSeconds": -1, "partialFilterExpression": {"sensor": 1}}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 1}', '{"sparse": true}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 1}', '{"partialFilterExpression": {"sensor": {"$regex": "a"}}}')$$);

-- Unsupported kinds: 0A000.
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 1}', '{"unique": true}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"note": "text"}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"loc": "2d"}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"temp": "hashed"}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"$**": 1}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"sensor.$**": 1}')$$);
-- Bad key patterns.
SELECT try($$SELECT tscoll.create_index('w', '{}')$$);
SELECT try($$SELECT tscoll.create_index('w', '[1]')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 2}')$$);

-- Duplicates: same keys and options return the name; same keys, other
-- options, or the same name with other keys: 42P07.
SELECT tscoll.create_index('w', '{"temp": 1}');
SELECT tscoll.create_index('w', '{"sensor.region": 1}', '{"name": "by_region"}');
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 1}', '{"hidden": true}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"temp": 1}', '{"name": "other"}')$$);
SELECT try($$SELECT tscoll.create_index('w', '{"sensor.kind": 1}', '{"name": "by_region"}')$$);
SELECT count(*) AS indexes FROM tscoll.list_indexes('w');

-- Indexes made with plain CREATE INDEX are listed with their definition.
CREATE INDEX by_hand ON "system.buckets.w" ((control->'count'));
SELECT i FROM tscoll.list_indexes('w') i WHERE i->>'name' = 'by_hand';
-- drop_index drops it by the name list_indexes gives.
SELECT tscoll.drop_index('w', 'by_hand');
SELECT count(*) AS by_hand_left FROM pg_class WHERE relname = 'by_hand';
SELECT try($$SELECT tscoll.drop_index('w', 'by_hand')$$);

-- The translated index serves queries on the view; hidden, it serves none.
-- (The two compound indexes on sensorId would serve it too: dropped first.)
SELECT tscoll.drop_index('w', 'sensor.sensorId_1_timestamp_-1');
SELECT tscoll.drop_index('w', 'timestamp_-1_sensor.sensorId_1');
INSERT INTO w ("timestamp", sensor, doc)
SELECT '2024-01-01 00:00:00+00'::timestamptz + i * interval '1 min',
       jsonb_build_object('sensorId', i % 50, 'region', 'eu'), jsonb_build_object('temp', i)
  FROM generate_series(1, 5000) i;
ANALYZE "system.buckets.w";
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM w WHERE sensor->'sensorId' = '7';
SELECT count(*) FROM w WHERE sensor->'sensorId' = '7';
SELECT tscoll.coll_mod('w', '{"index": {"keyPattern": {"sensor.sensorId": 1}, "hidden": true}}');
EXPLAIN (COSTS OFF) SELECT count(*) FROM w WHERE sensor->'sensorId' = '7';
SELECT i->'hidden' AS hidden FROM tscoll.list_indexes('w') i WHERE i->>'name' = 'sensor.sensorId_1';
SELECT tscoll.coll_mod('w', '{"index": {"name": "sensor.sensorId_1", "hidden": false}}');
EXPLAIN (COSTS OFF) SELECT count(*) FROM w WHERE sensor->'sensorId' = '7';
SELECT i->'hidden' AS hidden FROM tscoll.list_indexes('w') i WHERE i->>'name' = 'sensor.sensorId_1';
RESET enable_seqscan;
RESET enable_bitmapscan;
-- coll_mod changes a TTL index's expiry, and no other's
SELECT tscoll.coll_mod('w_ttl', '{"index": {"name": "ttl_eu", "expireAfterSeconds": 60}}');
SELECT i->'expireAfterSeconds' AS expiry FROM tscoll.list_indexes('w_ttl') i WHERE i->>'name' = 'ttl_eu';
SELECT try($$SELECT tscoll.coll_mod('w', '{"index": {"name": "by_region", "expireAfterSeconds": 60}}')$$);

-- Dropping.
SELECT tscoll.drop_index('w', 'by_region');
SELECT try($$SELECT tscoll.drop_index('w', 'by_region')$$);
SELECT tscoll.drop_index('w', 'sensor_1_timestamp_1');
SELECT tscoll.drop_index('w', 'sensor.unit_1');  -- hidden
SELECT i->>'name' AS name FROM tscoll.list_indexes('w') i;
-- the insert path still works without the default index
INSERT INTO w ("timestamp", sensor, doc) VALUES ('2024-02-01 00:00:00+00', '{"sensorId": 1}', '{"temp": 1}');

-- A collection without a metaField has no default index.
SELECT tscoll.create_collection('nometa', 't');
SELECT count(*) FROM tscoll.list_indexes('nometa');

-- Only the owner creates or drops; reading the list needs SELECT.
CREATE ROLE tscoll_other;
SET ROLE tscoll_other;
SELECT try($$SELECT tscoll.create_index('w', '{"x": 1}')$$);
SELECT try($$SELECT tscoll.drop_index('w', 'temp_1')$$);
SELECT try($$SELECT * FROM tscoll.list_indexes('w')$$);
RESET ROLE;
DROP ROLE tscoll_other;

-- MongoDB's CannotCreateIndex (22023): no key part empty or starting with '$'.
SELECT try(format($$SELECT tscoll.create_index('w', '%s')$$, k))
  FROM unnest(ARRAY['{"$x": 1}', '{"a.$b": 1}', '{"a..b": 1}', '{".a": 1}', '{"a.": 1}']) k;

-- Dropping the collection drops its index definitions.
SELECT tscoll.drop_collection('w');
SELECT tscoll.drop_collection('w_ttl');
SELECT count(*) FROM tscoll.indexes;
