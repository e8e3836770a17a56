#!/usr/bin/env bash
# Concurrency integration test (SPEC §4.2): CLIENTS pgbench connections each
# insert ROWS_PER_CLIENT measurements, one per transaction, into 10 series
# of one collection, in a temporary preloaded instance, while two COPYs of
# COPY_ROWS measurements each go into the same series; then checks.sql
# compares the collection with a plain table holding the same rows and
# checks every bucket against the limits; then one_series.sh has every
# client write one series; ttl.sh
# checks the TTL monitor on the same instance, dump_restore.sh pg_dump and
# pg_restore there too, upgrade.sh ALTER EXTENSION UPDATE from 0.1.0; then crash.sh kills an
# instance of its own under load and checks what recovery kept. Prints
# a TAP plan, then "ok <check>" or "not ok <check>" per check. Runs as the server user.
#   run.sh <postgres bin dir> <work dir> [clients] [rows per client]
set -euo pipefail
BIN=$1 WORK=$2 CLIENTS=${3:-8} ROWS_PER_CLIENT=${4:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$WORK/data
TTL_CHECKS=4  # ttl.sh
DUMP_CHECKS=$((3 * 9))  # dump_restore.sh: 3 formats x 9 checks
UPGRADE_CHECKS=$(grep -oE '^ *(check|same_in_both) upgrade_[a-z_]*' "$HERE/upgrade.sh" | sort -u | wc -l)  # upgrade.sh
CRASH_CHECKS=$((2 + $(grep -c "^SELECT 'crash_" "$HERE/crash_checks.sql")))  # crash.sh
ONE_SERIES_CHECKS=3  # one_series.sh
echo "1..$((1 + $(grep -c "^SELECT '" "$HERE/checks.sql") + ONE_SERIES_CHECKS + TTL_CHECKS + DUMP_CHECKS + UPGRADE_CHECKS + CRASH_CHECKS))"
rm -rf "$DATA"
mkdir -p "$WORK"
"$BIN/initdb" -D "$DATA" -A trust -U postgres >"$WORK/initdb.log" 2>&1
cat >>"$DATA/postgresql.conf" <<CONF
shared_preload_libraries = 'tscoll'
listen_addresses = ''
unix_socket_directories = '$WORK'
max_connections = 20
fsync = off
CONF
"$BIN/pg_ctl" -D "$DATA" -l "$WORK/server.log" -w start >/dev/null
trap '"$BIN/pg_ctl" -D "$DATA" -m immediate stop >/dev/null' EXIT
PSQL=("$BIN/psql" -X -q -h "$WORK" -U postgres -v ON_ERROR_STOP=1 -d tscoll_it)
"$BIN/createdb" -h "$WORK" -U postgres tscoll_it
"${PSQL[@]}" <<SQL
CREATE EXTENSION tscoll;
ALTER DATABASE tscoll_it SET tscoll.bucket_max_count = 100;
SELECT tscoll.create_collection('c', 't', 'm') \\g /dev/null
-- rollups kept while the writers run, refreshed by a loop of their own
SELECT tscoll.create_rollup('c_seconds', 'c', '1 second', NULL, '{"n": ["count", "sum", "min", "max"]}') \\g /dev/null
SELECT tscoll.create_rollup('c_minutes', 'c_seconds', '1 minute', '[]', '{"n": ["count", "sum", "max"]}') \\g /dev/null
CREATE TABLE expected (t timestamptz, m jsonb, n bigint);
CREATE SEQUENCE measurement_number;
SQL
# The COPYs' rows: times among the single rows', numbers of their own.
COPY_ROWS=20000
for k in 1 2; do
    "${PSQL[@]}" -c "\\copy (SELECT timestamptz '2024-01-01 00:00:00+00' + (i * 800 + $k * 400) * interval '1 ms', to_jsonb(i % 10), jsonb_build_object('n', $k * 10000000 + i) FROM generate_series(1, $COPY_ROWS) i) TO '$WORK/copy_$k.txt'"
done
"$BIN/pgbench" -h "$WORK" -U postgres -n -c "$CLIENTS" -j "$CLIENTS" -t "$ROWS_PER_CLIENT" \
    -f "$HERE/insert.pgbench" tscoll_it >"$WORK/pgbench.log" 2>&1 &
PGBENCH=$!
sleep 1
# Refreshes race the writers until they are done.
( while kill -0 "$PGBENCH" 2>/dev/null; do
      "${PSQL[@]}" -c "SELECT tscoll.refresh_rollups()" >/dev/null || exit 1
      sleep 0.2
  done ) >"$WORK/refresh.log" 2>&1 &
REFRESHES=$!
COPIES=()
for k in 1 2; do
    "${PSQL[@]}" -c "\\copy c (t, m, doc) FROM '$WORK/copy_$k.txt'" >"$WORK/copy_$k.log" 2>&1 &
    COPIES+=($!)
done
copies_ok=t
for pid in "${COPIES[@]}"; do wait "$pid" || copies_ok=f; done
if wait "$PGBENCH" && [ $copies_ok = t ] && wait "$REFRESHES"; then
    echo "ok pgbench_and_copies_without_errors"
else
    echo "not ok pgbench_and_copies_without_errors"
    tail -n 20 "$WORK/pgbench.log" "$WORK"/copy_*.log "$WORK/refresh.log"
fi
for k in 1 2; do
    "${PSQL[@]}" -c "CREATE TEMP TABLE copied (t timestamptz, m jsonb, doc jsonb)" \
        -c "\\copy copied FROM '$WORK/copy_$k.txt'" \
        -c "INSERT INTO expected SELECT t, m, (doc->>'n')::bigint FROM copied"
done
grep -E '^(tps|latency average)' "$WORK/pgbench.log" | sed 's/^/# /'
"${PSQL[@]}" -v rows=$((CLIENTS * ROWS_PER_CLIENT + 2 * COPY_ROWS)) -f "$HERE/checks.sql" |
    while read -r name holds; do
        if [ "$holds" = t ]; then echo "ok $name"; else echo "not ok $name"; fi
    done
"${PSQL[@]}" -At -c "SELECT '# ' || count(*) || ' buckets, ' || avg((control->>'count')::int)::int || ' measurements per bucket on average' FROM \"system.buckets.c\""
"${PSQL[@]}" -d reclaim_it -At -c "SELECT '# folded tails: ' || round(pg_total_relation_size('\"system.buckets.folded\"')::numeric / pg_total_relation_size('\"system.buckets.bulk\"'), 2) || ' times the bulk load''s bytes'"
"$HERE/one_series.sh" "$BIN" "$WORK" "$CLIENTS"
"$HERE/ttl.sh" "$BIN" "$WORK"
"$HERE/dump_restore.sh" "$BIN" "$WORK" "$WORK/dump"
"$HERE/upgrade.sh" "$BIN" "$WORK" "$HERE/../upgrade"
"$HERE/crash.sh" "$BIN" "$WORK/crash"
