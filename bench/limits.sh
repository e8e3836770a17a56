#!/usr/bin/env bash
# Measures tscoll at its limits (doc/OPERATIONS.md, Limits) on the local instance
# (scripts/start.sh), in a fresh database "tscoll_limits":
#   bench/limits.sh series [N]     N distinct meta values (default 1,000,000)
#   bench/limits.sh measurement    one measurement of 16 MB
#   bench/limits.sh volume [M]     M million measurements (default 100) in
#                                  1,000 series, then queries, DELETE, TTL
# Prints one line per step with its wall time; meant to be read, not asserted.
source "$(dirname "$0")/../scripts/lib.sh"
"$ROOT/scripts/start.sh" >/dev/null
DB=tscoll_limits
PSQL=("$PG_BIN/psql" -X -q -At -h "$ROOT/.pg/run" -p "${TSCOLL_PORT:-5499}" -U postgres -v ON_ERROR_STOP=1)

fresh_database() {
    "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
    "${PSQL[@]}" -d "$DB" -c "CREATE EXTENSION tscoll"
}

# Runs SQL and prints "<label>: <seconds> s  <output>".
step() {
    local label=$1 sql=$2 start out
    start=$(date +%s%N)
    out=$("${PSQL[@]}" -d "$DB" -c "$sql" 2>&1 | tr '\n' ' ')
    local ms=$((($(date +%s%N) - start) / 1000000))
    printf '%-48s %6d.%03d s  %s\n' "$label" $((ms / 1000)) $((ms % 1000)) "$out"
}

sizes() {
    step "bucket table size, buckets, measurements" "
        SELECT pg_size_pretty(pg_total_relation_size(bucket_table)), t.bucket_count, t.measurements
          FROM tscoll.collections, tscoll._bucket_totals(view) t"
}

series() {
    local n=${1:-1000000}
    fresh_database
    "${PSQL[@]}" -d "$DB" -c "SELECT tscoll.create_collection('s', 't', 'm')" >/dev/null
    step "insert $n measurements, one per series" "
        INSERT INTO s (t, m, doc) SELECT timestamptz '2024-01-01' + i * interval '1 ms',
            jsonb_build_object('host', 'host_' || i), jsonb_build_object('v', i)
          FROM generate_series(1, $n) i"
    step "catalog after the first round" "SELECT tscoll.catalog_stats()"
    step "insert $n more, one per series (reopening)" "
        INSERT INTO s (t, m, doc) SELECT timestamptz '2024-01-01 00:30' + i * interval '1 ms',
            jsonb_build_object('host', 'host_' || i), jsonb_build_object('v', i)
          FROM generate_series(1, $n) i"
    step "catalog after the second round" "SELECT tscoll.catalog_stats()"
    sizes
    step "one series' measurements" "SELECT count(*) FROM s WHERE m = '{\"host\": \"host_4242\"}'"
    step "count(*)" "SELECT count(*) FROM s"
}

measurement() {
    fresh_database
    "${PSQL[@]}" -d "$DB" -c "SELECT tscoll.create_collection('big', 't')" >/dev/null
    local doc="jsonb_build_object('blob', repeat('x', 16 * 1024 * 1024 - 100))"
    step "16 MB measurement, default max_measurement_size" "
        DO \$\$ BEGIN
            INSERT INTO big (t, doc) VALUES ('2024-01-01', $doc);
        EXCEPTION WHEN program_limit_exceeded THEN RAISE NOTICE '%', SQLERRM; END \$\$"
    step "16 MB measurement, max_measurement_size 16MB" "
        SET tscoll.max_measurement_size = '16MB';
        INSERT INTO big (t, doc) VALUES ('2024-01-01', $doc)"
    step "read it back" "SELECT length(doc->>'blob') FROM big"
    step "buckets" "SELECT count(*), pg_size_pretty(sum(length(data))) FROM \"system.buckets.big\""
    step "a second one goes to a new bucket" "
        SET tscoll.max_measurement_size = '16MB';
        INSERT INTO big (t, doc) VALUES ('2024-01-01 00:00:01', $doc);
        SELECT count(*) FROM \"system.buckets.big\""
}

volume() {
    local millions=${1:-100}
    fresh_database
    "${PSQL[@]}" -d "$DB" -c "SELECT tscoll.create_collection('v', 't', 'm')" >/dev/null
    # 1,000 series, one measurement every 10 s each: 1M measurements = 10,000 s,
    # ending about now (100M: the last 11.6 days).
    local base start
    base=$("${PSQL[@]}" -d "$DB" -c "SELECT date_trunc('hour', now()) - $millions * interval '10000 s'")
    start=$(date +%s)
    for ((k = 0; k < millions; k++)); do
        "${PSQL[@]}" -d "$DB" -c "
            INSERT INTO v (t, m, doc)
            SELECT timestamptz '$base' + (i / 1000) * interval '10 s', to_jsonb(i % 1000),
                   jsonb_build_object('usage', (i * 7919) % 100, 'load', (i % 997) * 0.25)
              FROM generate_series($k * 1000000::bigint, ($k + 1) * 1000000::bigint - 1) i"
        if (((k + 1) % 10 == 0)); then
            echo "  $((k + 1))M measurements after $(($(date +%s) - start)) s"
        fi
    done
    echo "insert ${millions}M measurements: $(($(date +%s) - start)) s"
    "${PSQL[@]}" -d "$DB" -c "VACUUM ANALYZE \"system.buckets.v\""
    sizes
    step "count(*)" "SELECT count(*) FROM v"
    step "one series, one hour" "
        SELECT count(*), avg((doc->>'usage')::float8) FROM v
         WHERE m = '42' AND t >= timestamptz '$base' + interval '1 hour' AND t < timestamptz '$base' + interval '2 hours'"
    step "all series, one hour, max per series" "
        SELECT count(*) FROM (SELECT m, max((doc->>'usage')::float8) FROM v
         WHERE t >= timestamptz '$base' + interval '1 hour' AND t < timestamptz '$base' + interval '2 hours' GROUP BY m) g"
    step "DELETE one series" "DELETE FROM v WHERE m = '7'"
    # Expire what is older than 90% of the span (the monitor may get there first).
    step "TTL pass, 10% expired (buckets deleted)" "
        SELECT tscoll.coll_mod('v', jsonb_build_object('expireAfterSeconds', $millions * 9000)) IS NULL;
        SELECT tscoll.run_ttl_pass()"
    sizes
}

case ${1:-} in
series) series "${2:-}" ;;
measurement) measurement ;;
volume) volume "${2:-}" ;;
*) die "usage: bench/limits.sh series [N] | measurement | volume [millions]" ;;
esac
