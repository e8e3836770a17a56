#!/usr/bin/env bash
# ALTER EXTENSION tscoll UPDATE from 0.1.0, on run.sh's running instance.
# test/upgrade/database-0.1.0.sql is a pg_dump of a database made by tscoll
# 0.1.0's library and script (collections with and without meta, fixed
# bucketing, indexes, TTL, a partial DELETE and a meta UPDATE done by 0.1.0),
# holding in table `expected` digests of what 0.1.0 read from it.
# test/upgrade/tscoll--0.1.0.sql is 0.1.0's script, which scripts/test.sh
# installs beside the current ones. The dump is restored at 0.1.0 and
# updated; the updated extension must define exactly what a fresh
# CREATE EXTENSION does, read what 0.1.0 read, and write, delete, update,
# expire and take typed fields as 0.2.0 does. Prints one "ok"/"not ok" line
# per check. Runs as the server user.
#   upgrade.sh <postgres bin dir> <socket dir> <fixture dir>
set -euo pipefail
BIN=$1 SOCKETS=$2 FIXTURES=$3
CONN=(-h "$SOCKETS" -U postgres)
psql_in() { "$BIN/psql" -X -q -At "${CONN[@]}" -v ON_ERROR_STOP=1 -d "$@"; }
check() { if [ "$2" = t ]; then echo "ok $1"; else echo "not ok $1 ($2)"; fi; }
# Checks that `query` gives the same text in the updated and the fresh
# database: check name, what the fresh one stands for, query.
same_in_both() {
    local updated fresh
    updated=$(psql_in upgrade_old -c "$3")
    fresh=$(psql_in upgrade_new -c "$3")
    if [ "$updated" = "$fresh" ]; then
        check "$1" t
    else
        check "$1" "differs from $2: $(diff <(echo "$fresh") <(echo "$updated") |
            grep '^[<>]' | cut -c1-160 | head -n 6 | tr '\n' ' ')"
    fi
}

for db in upgrade_old upgrade_new; do "$BIN/dropdb" "${CONN[@]}" --if-exists "$db"; done
"$BIN/createdb" "${CONN[@]}" upgrade_old
"$BIN/createdb" "${CONN[@]}" upgrade_new
psql_in upgrade_old -f "$FIXTURES/database-0.1.0.sql" >/dev/null
psql_in upgrade_new -c "CREATE EXTENSION tscoll"
before=$(psql_in upgrade_old -c "SELECT extversion FROM pg_extension WHERE extname = 'tscoll'")

# Before the update, the new library under 0.1.0's SQL: a C function whose
# arguments changed refuses its old declaration instead of reading past it.
check upgrade_old_declaration_refused "$(psql_in upgrade_old <<'SQL'
CREATE FUNCTION pg_temp.refused() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tscoll._remove_measurements(_id, min_time, data, ARRAY[1]::bigint[], 'ts')
       FROM "system.buckets.weather" LIMIT 1;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN CASE WHEN SQLSTATE = '55000' THEN 't' ELSE SQLSTATE || ' ' || SQLERRM END;
END
$$;
SELECT pg_temp.refused();
SQL
)"
# A catalog row whose view was dropped with event triggers off does not
# stop the update.
psql_in upgrade_old <<'SQL'
SELECT tscoll.create_collection('orphan', 't') \g /dev/null
SET session_replication_role = replica;
DROP VIEW orphan;
SQL
psql_in upgrade_old -c "ALTER EXTENSION tscoll UPDATE"
psql_in upgrade_old -c "DELETE FROM tscoll.collections WHERE view::oid NOT IN (SELECT oid FROM pg_class)"
check upgrade_version "$(psql_in upgrade_old -c "SELECT '$before' = '0.1.0' AND extversion = '0.2.0'
    FROM pg_extension WHERE extname = 'tscoll'")"

# Every object of the extension with its definition, one line each.
OBJECTS=$(cat <<'SQL'
SELECT string_agg(line, E'\n' ORDER BY line) FROM (
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) || ' ' || coalesce(CASE
    WHEN d.classid = 'pg_proc'::regclass AND (SELECT prokind FROM pg_proc WHERE oid = d.objid) = 'a' THEN
        (SELECT format('%s %s %s %s', aggtransfn, aggcombinefn, aggfinalfn, aggtranstype::regtype)
           FROM pg_aggregate WHERE aggfnoid = d.objid)
    WHEN d.classid = 'pg_proc'::regclass THEN
        pg_get_functiondef(d.objid) || coalesce(obj_description(d.objid, 'pg_proc'), '')
        || coalesce((SELECT proacl::text FROM pg_proc WHERE oid = d.objid), '')
    WHEN d.classid = 'pg_class'::regclass THEN
        (SELECT relkind::text || coalesce(relacl::text, '') || coalesce(reloptions::text, '')
                || coalesce(obj_description(oid, 'pg_class'), '')
           FROM pg_class WHERE oid = d.objid)
        || coalesce((SELECT string_agg(format('%s %s %s %s', attname, format_type(atttypid, atttypmod),
                                              attnotnull, pg_get_expr(adbin, adrelid)), ', ' ORDER BY attnum)
                       FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
                      WHERE attrelid = d.objid AND attnum > 0 AND NOT attisdropped), '')
        || coalesce((SELECT string_agg(pg_get_constraintdef(oid), ', ' ORDER BY conname)
                       FROM pg_constraint WHERE conrelid = d.objid), '')
        || coalesce((SELECT string_agg(pg_get_indexdef(indexrelid), ', ' ORDER BY indexrelid::regclass::text)
                       FROM pg_index WHERE indrelid = d.objid), '')
        || coalesce((SELECT string_agg(pg_get_triggerdef(oid), ', ' ORDER BY tgname)
                       FROM pg_trigger WHERE tgrelid = d.objid AND NOT tgisinternal), '')
        || coalesce((SELECT string_agg(format('%s %s %s %s', polname, polcmd, pg_get_expr(polqual, polrelid),
                                              pg_get_expr(polwithcheck, polrelid)), ', ' ORDER BY polname)
                       FROM pg_policy WHERE polrelid = d.objid), '')
    WHEN d.classid = 'pg_event_trigger'::regclass THEN
        (SELECT format('%s %s %s %s', evtevent, evtfoid::regproc, evtenabled, evttags)
           FROM pg_event_trigger WHERE oid = d.objid)
    END, '') AS line
  FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'tscoll'
UNION ALL
SELECT 'configuration ' || extconfig::regclass[]::text || coalesce(extcondition::text, '')
  FROM pg_extension WHERE extname = 'tscoll') objects
SQL
)
same_in_both upgrade_same_objects "CREATE EXTENSION" "$OBJECTS"

# The old collections' views, rules, triggers and comments are what
# create_collection makes for them now.
psql_in upgrade_new <<'SQL'
SELECT tscoll.create_collection('weather', 'ts', 'sensor', granularity => 'minutes',
                                expire_after_seconds => 315360000) \g /dev/null
SELECT tscoll.create_collection_from_options('fixed', '{"timeseries": {"timeField": "t",
    "metaField": "m", "bucketMaxSpanSeconds": 600, "bucketRoundingSeconds": 600}}') \g /dev/null
SELECT tscoll.create_collection('nometa', 't') \g /dev/null
SELECT tscoll.create_index('weather', '{"sensor.site": 1, "ts": -1}') \g /dev/null
SELECT tscoll.create_index('nometa', '{"t": 1}') \g /dev/null
SQL
VIEWS=$(cat <<'SQL'
SELECT string_agg(line, E'\n' ORDER BY line) FROM (
    SELECT v::text || ' ' || pg_get_viewdef(v) || coalesce(obj_description(v, 'pg_class'), '') AS line
      FROM unnest(ARRAY['weather', 'fixed', 'nometa']::regclass[]) v
    UNION ALL
    SELECT ev_class::regclass::text || ' ' || pg_get_ruledef(oid) FROM pg_rewrite
     WHERE ev_class IN ('weather'::regclass, 'fixed'::regclass, 'nometa'::regclass)
    UNION ALL
    SELECT pg_get_triggerdef(oid) FROM pg_trigger
     WHERE tgrelid IN ('weather'::regclass, 'fixed'::regclass, 'nometa'::regclass)
    UNION ALL
    SELECT c.bucket_table::text || ' ' || coalesce(obj_description(c.bucket_table, 'pg_class'), '')
           || coalesce((SELECT string_agg(pg_get_indexdef(indexrelid), ', ' ORDER BY indexrelid::regclass::text)
                          FROM pg_index WHERE indrelid = c.bucket_table), '')
      FROM tscoll.collections c) definitions
SQL
)
same_in_both upgrade_same_views create_collection "$VIEWS"

# What 0.1.0 read, read again through 0.2.0's library and SQL.
READS=$(cat <<'SQL'
SET TimeZone = 'Etc/UTC';
SET DateStyle = 'ISO, MDY';
WITH now_read AS (
SELECT 'weather rows' AS what, md5(string_agg(format('%s|%s|%s', ts, sensor, doc), ',' ORDER BY doc->>'count')) AS digest, count(*) AS n FROM weather
UNION ALL SELECT 'fixed rows', md5(string_agg(format('%s|%s|%s', t, m, doc), ',' ORDER BY doc->>'v')), count(*) FROM fixed
UNION ALL SELECT 'nometa rows', md5(string_agg(format('%s|%s', t, doc), ',' ORDER BY t)), count(*) FROM nometa
UNION ALL SELECT 'weather buckets', md5(string_agg(b::text, ',' ORDER BY b._id)), count(*) FROM tscoll.buckets('weather') b
UNION ALL SELECT 'fixed buckets', md5(string_agg(b::text, ',' ORDER BY b._id)), count(*) FROM tscoll.buckets('fixed') b
UNION ALL SELECT 'nometa buckets', md5(string_agg(b::text, ',' ORDER BY b._id)), count(*) FROM tscoll.buckets('nometa') b)
SELECT coalesce(string_agg(what, ', '), 't') FROM (
    SELECT what FROM (TABLE now_read EXCEPT TABLE expected) a
    UNION SELECT what FROM (TABLE expected EXCEPT TABLE now_read) b) differing;
SQL
)
check upgrade_reads "$(psql_in upgrade_old -c "$READS" | tail -n 1)"

# The planner's fast paths on 0.1.0's buckets agree with plain unpacking.
QUERIES="SELECT sensor->>'site', count(*), max((doc->>'temp')::float8), min(ts), max(ts)
           FROM weather WHERE ts >= '2024-03-01 06:00+00' AND ts < '2024-03-01 20:00+00'
          GROUP BY 1 ORDER BY 1;
         SELECT date_trunc('hour', t), m, avg((doc->>'w')::float8) FROM fixed GROUP BY 1, 2 ORDER BY 1, 2;
         SELECT DISTINCT ON (sensor) sensor, ts, doc FROM weather ORDER BY sensor, ts DESC;
         SELECT * FROM nometa WHERE t > '2024-03-01 10:00+00' AND (doc->>'v')::float8 < 100 ORDER BY t;"
fast=$(psql_in upgrade_old -c "$QUERIES")
plain=$(psql_in upgrade_old -c "SET tscoll.enable_bucket_pruning = off; $QUERIES")
check upgrade_queries "$([ -n "$fast" ] && [ "$fast" = "$plain" ] && echo t || echo "fast paths differ")"

# Writes: new measurements, in old buckets' series and new ones; DELETE and
# a meta UPDATE through the view; typed fields on an old collection; TTL.
WRITES=$(cat <<'SQL'
INSERT INTO weather (ts, sensor, doc)
SELECT timestamptz '2024-03-02 00:00:00+00' + i * interval '11 s',
       jsonb_build_object('site', i % 5, 'kind', 'probe'), jsonb_build_object('temp', i * 0.25, 'count', 10000 + i)
  FROM generate_series(1, 500) i;
INSERT INTO nometa (t, doc) VALUES ('2024-03-01 00:02:00+00', '{"v": -1}');
DELETE FROM weather WHERE (doc->>'count')::int % 10 = 7;
UPDATE fixed SET m = '"again"' WHERE m = '"renamed"';
SELECT tscoll.coll_mod('weather', '{"fields": {"temp": "float8"}}') \g /dev/null
SELECT count(*) = 2700 + 500 - 300 - 50
       AND (SELECT count(*) FROM weather WHERE temp IS NOT NULL) = 2700 + 500 - 300 - 50
       AND (SELECT count(*) FROM weather WHERE (doc->>'count')::int % 10 = 7) = 0
       AND (SELECT count(*) FROM fixed WHERE m = '"again"') = 500
       AND (SELECT count(*) FROM nometa) = 201
       AND (SELECT sum(c) FROM (SELECT (tscoll.collection_stats(v)->>'numMeasurements')::bigint c
                                  FROM unnest(ARRAY['weather', 'fixed', 'nometa']::regclass[]) v) s)
           = (SELECT count(*) FROM weather) + 1000 + 201
  FROM weather;
SQL
)
check upgrade_writes "$(psql_in upgrade_old <<<"$WRITES" | tail -n 1)"

TTL=$(cat <<'SQL'
CREATE TEMP TABLE before AS SELECT count(*) AS n FROM weather;
SELECT tscoll.coll_mod('weather', '{"expireAfterSeconds": 3600}') \g /dev/null
SELECT tscoll.run_ttl_pass(timestamptz '2024-03-02 12:00:00+00') \g /dev/null
SELECT count(*) > 0 AND count(*) < (SELECT n FROM before)
       AND NOT EXISTS (SELECT FROM "system.buckets.weather" b, tscoll.collections c
                        WHERE c.view = 'weather'::regclass
                          AND b.min_time <= timestamptz '2024-03-02 12:00:00+00'
                                            - (c.expire_after_seconds + c.bucket_max_span_seconds) * interval '1 s')
       AND (SELECT count(*) FROM fixed) = 1000
  FROM weather;
SQL
)
check upgrade_ttl "$(psql_in upgrade_old <<<"$TTL" | tail -n 1)"
