-- Each check prints one row: its name and whether it holds. cpu is
-- distributed, cpu_local holds the same readings; every statement runs on
-- both, and their contents must stay the same.
\pset tuples_only on
\pset format unaligned
\pset fieldsep ' '
SET client_min_messages = error;

CREATE FUNCTION explained(query text) RETURNS text LANGUAGE plpgsql AS
$$
DECLARE
    line text;
    result text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF, VERBOSE) ' || query LOOP
        result := result || line || E'\n';
    END LOOP;
    RETURN result;
END
$$;
-- A collection's measurements in one order, _id left out.
CREATE FUNCTION contents(collection text) RETURNS text LANGUAGE sql AS
$$ SELECT format('SELECT time, tags, doc - ''_id'' AS doc FROM %I
                   ORDER BY time, tags->>''hostname'', doc::text', collection) $$;

SELECT 'listed_as_distributed',
       (SELECT options->'distribution'->>'shardCount' FROM tscoll.list_collections()
         WHERE name = 'cpu'::regclass) = '8'
       AND (SELECT options FROM tscoll.list_collections()
             WHERE name = 'cpu_local'::regclass) ? 'distribution' IS FALSE;
SELECT 'stats_of_distributed',
       (tscoll.collection_stats('cpu')->>'numMeasurements')::bigint
           = (SELECT count(*) FROM cpu_local)
       AND (tscoll.collection_stats('cpu')->>'sharded')::boolean
       AND (tscoll.collection_stats('cpu')->>'totalSize')::bigint > 0;
-- A series' buckets share a shard.
SELECT 'series_in_one_shard', bool_and(shards = 1) FROM (
    SELECT count(DISTINCT series_hash) AS shards FROM "system.buckets.cpu" GROUP BY meta) s;
-- Aggregation in buckets runs in the shard queries: partial aggregates
-- computed by tscoll's scan on the workers, combined on the coordinator.
SELECT 'aggregation_in_shards',
       explained($$SELECT date_trunc('minute', time), max((doc->>'usage_user')::float8)
                     FROM cpu GROUP BY 1$$)
           ~ 'Task Count: 8.*TscollUnpack';
SELECT 'contents_equal_after_writes',
       same_results(contents('cpu'), contents('cpu_local'));

-- The measurements a statement reports (its command tag's count).
CREATE FUNCTION reported(statement text) RETURNS bigint LANGUAGE plpgsql AS
$$
DECLARE
    n bigint;
BEGIN
    EXECUTE statement;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
CREATE TEMP TABLE reported (statement text, distributed bigint, local bigint);
INSERT INTO reported SELECT 'meta update',
    reported($$UPDATE cpu SET tags = tags || '{"team": "moved"}' WHERE tags->>'hostname' = 'host_5'$$),
    reported($$UPDATE cpu_local SET tags = tags || '{"team": "moved"}' WHERE tags->>'hostname' = 'host_5'$$);
SELECT 'meta_update', same_results(contents('cpu'), contents('cpu_local'))
       AND (SELECT count(*) FROM cpu WHERE tags->>'team' = 'moved') = :hours * 360 + 3;
-- The moved series still takes rows (its buckets keep their shard key).
CREATE TEMP TABLE moved AS SELECT time + interval '2 s' AS time, tags, doc - '_id' - 'time' - 'tags' AS doc
  FROM cpu_local WHERE tags->>'team' = 'moved' AND time > '2016-01-01 05:59:00';
INSERT INTO cpu SELECT * FROM moved;
INSERT INTO cpu_local SELECT * FROM moved;
SELECT 'insert_after_meta_update', same_results(contents('cpu'), contents('cpu_local'));

INSERT INTO reported SELECT 'delete by meta',
    reported($$DELETE FROM cpu WHERE tags->>'hostname' = 'host_6'$$),
    reported($$DELETE FROM cpu_local WHERE tags->>'hostname' = 'host_6'$$);
SELECT 'delete_by_meta', same_results(contents('cpu'), contents('cpu_local'));
SELECT 'measurements_reported', bool_and(distributed = local AND local > 0) FROM reported;
CREATE TEMP TABLE refused (ok boolean);
DO $$
BEGIN
    EXECUTE 'DELETE FROM cpu WHERE tags->>''hostname'' = ''host_7'' RETURNING time';
    INSERT INTO refused VALUES (false);
EXCEPTION WHEN feature_not_supported THEN
    INSERT INTO refused VALUES (SQLERRM LIKE '%RETURNING is not supported on distributed%');
END
$$;
SELECT 'returning_refused', coalesce(bool_and(ok), false) FROM refused;
DELETE FROM cpu WHERE time < '2016-01-01 00:30:05';
DELETE FROM cpu_local WHERE time < '2016-01-01 00:30:05';
SELECT 'delete_by_time', same_results(contents('cpu'), contents('cpu_local'));
DELETE FROM cpu WHERE (doc->>'usage_user')::float8 > 95;
DELETE FROM cpu_local WHERE (doc->>'usage_user')::float8 > 95;
SELECT 'delete_by_measurement', same_results(contents('cpu'), contents('cpu_local'))
       AND NOT EXISTS (SELECT 1 FROM cpu WHERE (doc->>'usage_user')::float8 > 95);

-- Another role, with the privileges on the view and (Citus checks them on
-- the shards as the current user) on the bucket table.
CREATE ROLE tscoll_citus_user LOGIN;
GRANT SELECT, INSERT, DELETE ON cpu, cpu_local TO tscoll_citus_user;
GRANT SELECT, UPDATE, DELETE ON "system.buckets.cpu" TO tscoll_citus_user;
SET ROLE tscoll_citus_user;
DELETE FROM cpu WHERE (doc->>'usage_system')::float8 > 99;
DELETE FROM cpu_local WHERE (doc->>'usage_system')::float8 > 99;
RESET ROLE;
SELECT 'other_role_through_view', same_results(contents('cpu'), contents('cpu_local'));

SELECT tscoll.create_index('cpu', '{"tags.hostname": 1, "time": -1}') \g /dev/null
SELECT 'index_on_shards',
       (SELECT count(*) FROM tscoll.list_indexes('cpu')) = 2
       AND explained($$SELECT * FROM cpu WHERE tags->>'hostname' = 'host_3'
                        ORDER BY time DESC LIMIT 1$$) LIKE '%tags.hostname_1_time_-1%';

-- TTL: readings of 2016 expire, this week's stay.
CREATE TEMP TABLE recent AS
SELECT now() - interval '1 hour' + s * interval '1 s' AS time, tags, doc - '_id' - 'time' - 'tags' AS doc
  FROM cpu_local, generate_series(1, 3) s WHERE time = '2016-01-01 05:00:00+00';
INSERT INTO cpu SELECT * FROM recent;
INSERT INTO cpu_local SELECT * FROM recent;
SELECT tscoll.coll_mod('cpu', '{"expireAfterSeconds": 604800}') \g /dev/null
SELECT tscoll.coll_mod('cpu_local', '{"expireAfterSeconds": 604800}') \g /dev/null
SELECT tscoll.run_ttl_pass() \g /dev/null
SELECT 'ttl_expires_distributed',
       (SELECT count(*) FROM cpu) = (SELECT count(*) FROM recent)
       AND (SELECT count(*) FROM recent) > 0
       AND same_results(contents('cpu'), contents('cpu_local'));

-- The TTL monitor (every second, 10 buckets per transaction on this
-- cluster) expires a distributed collection by itself.
SELECT tscoll.create_collection('aging', 'time', 'tags') \g /dev/null
SELECT tscoll.distribute_collection('aging', 4) \g /dev/null
INSERT INTO aging SELECT time, tags, doc FROM readings WHERE s < 360;
INSERT INTO aging VALUES (now(), '{"hostname": "host_0"}', '{"usage_user": 1}');
CREATE TEMP TABLE aging_buckets AS SELECT count(*) AS n FROM "system.buckets.aging";
SELECT tscoll.coll_mod('aging', '{"expireAfterSeconds": 604800}') \g /dev/null
CREATE FUNCTION waited_for_expiry() RETURNS boolean LANGUAGE plpgsql AS
$$
BEGIN
    FOR i IN 1 .. 60 LOOP
        IF (SELECT count(*) FROM aging) = 1 THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.5);
    END LOOP;
    RETURN false;
END
$$;
-- (a statement of its own: Citus runs a query's distributed subqueries
-- before anything else in it)
CREATE TEMP TABLE aging_waited AS SELECT waited_for_expiry() AS expired;
SELECT 'ttl_monitor_expires_distributed', (SELECT n FROM aging_buckets) > 10
       AND (SELECT expired FROM aging_waited)
       AND (SELECT count(*) FROM "system.buckets.aging") = 1;
SELECT tscoll.drop_collection('aging') \g /dev/null

-- 4 sessions' single rows (run.sh): every row once, buckets within limits.
CREATE TEMP VIEW events_buckets AS
SELECT sum((control->>'count')::int) AS n, min(min_time) AS min_time,
       max(tscoll._control_time(control, 'latest', 't')) AS max_time
  FROM "system.buckets.events" GROUP BY coalesce(control->'tail'->>'bucket', _id::text);
SELECT 'concurrent_inserts_all_there', count(*) = :rows FROM events;
SELECT 'concurrent_inserts_exact', NOT EXISTS (
    (SELECT t, m, n FROM expected EXCEPT ALL SELECT t, m, (doc->>'n')::bigint FROM events)
    UNION ALL
    (SELECT t, m, (doc->>'n')::bigint FROM events EXCEPT ALL SELECT t, m, n FROM expected));
SELECT 'concurrent_buckets_within_limits',
       coalesce(bool_and(n <= 1000 AND max_time < min_time + interval '1 hour'), false)
  FROM events_buckets;
SELECT 'concurrent_counters', (tscoll.collection_stats('events')->>'numMeasurementsCommitted')::bigint = :rows;

SELECT tscoll.undistribute_collection('cpu') \g /dev/null
SELECT 'undistributed', same_results(contents('cpu'), contents('cpu_local'))
       AND NOT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = '"system.buckets.cpu"'::regclass);
SELECT tscoll.distribute_collection('cpu') \g /dev/null
SELECT 'distributed_again', same_results(contents('cpu'), contents('cpu_local'));

DROP VIEW cpu;
DROP VIEW events_buckets;
SELECT tscoll.drop_collection('events') \g /dev/null
SELECT 'dropped', NOT EXISTS (SELECT FROM pg_dist_partition)
       AND (SELECT count(*) FROM tscoll.collections) = 1;
