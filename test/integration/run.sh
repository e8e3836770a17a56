#!/usr/bin/env bash
# Concurrency integration test (SPEC §4.2): CLIENTS pgbench connections each
# insert ROWS_PER_CLIENT measurements, one per transaction, into 10 series
# of one collection, in a temporary preloaded instance; then checks.sql
# compares the collection with a plain table written in the same
# transactions and checks every bucket against the limits; then ttl.sh
# checks the TTL monitor on the same instance, dump_restore.sh pg_dump and
# pg_restore there too; then crash.sh kills an
# instance of its own under load and checks what recovery kept. Prints
# a TAP plan, then "ok <check>" or "not ok <check>" per check. Runs as the server user.
#   run.sh <postgres bin dir> <work dir> [clients] [rows per client]
set -euo pipefail
BIN=$1 WORK=$2 CLIENTS=${3:-8} ROWS_PER_CLIENT=${4:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$WORK/data
TTL_CHECKS=4  # ttl.sh
DUMP_CHECKS=$((3 * 8))  # dump_restore.sh: 3 formats x 8 checks
CRASH_CHECKS=$((2 + $(grep -c "^SELECT 'crash_" "$HERE/crash_checks.sql")))  # crash.sh
echo "1..$((1 + $(grep -c "^SELECT '" "$HERE/checks.sql") + TTL_CHECKS + DUMP_CHECKS + CRASH_CHECKS))"
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
CREATE TABLE expected (t timestamptz, m jsonb, n bigint);
CREATE SEQUENCE measurement_number;
SQL
if "$BIN/pgbench" -h "$WORK" -U postgres -n -c "$CLIENTS" -j "$CLIENTS" -t "$ROWS_PER_CLIENT" \
    -f "$HERE/insert.pgbench" tscoll_it >"$WORK/pgbench.log" 2>&1; then
    echo "ok pgbench_without_errors"
else
    echo "not ok pgbench_without_errors"
    tail -n 20 "$WORK/pgbench.log"
fi
grep -E '^(tps|latency average)' "$WORK/pgbench.log" | sed 's/^/# /'
"${PSQL[@]}" -v rows=$((CLIENTS * ROWS_PER_CLIENT)) -f "$HERE/checks.sql" |
    while read -r name holds; do
        if [ "$holds" = t ]; then echo "ok $name"; else echo "not ok $name"; fi
    done
"${PSQL[@]}" -At -c "SELECT '# ' || count(*) || ' buckets, ' || avg((control->>'count')::int)::int || ' measurements per bucket on average' FROM \"system.buckets.c\""
"$HERE/ttl.sh" "$BIN" "$WORK"
"$HERE/dump_restore.sh" "$BIN" "$WORK" "$WORK/dump"
"$HERE/crash.sh" "$BIN" "$WORK/crash"
