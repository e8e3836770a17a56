#!/usr/bin/env bash
# TTL monitor integration (SPEC §9), on run.sh's running instance: with
# tscoll.ttl_monitor_sleep_secs = 1, the monitor expires buckets on its own
# in two databases while inserts go on, then counts are exact; it keeps
# working after one database is dropped and another created. Prints one
# "ok"/"not ok" line per check (4). Runs as the server user.
#   ttl.sh <postgres bin dir> <socket dir>
set -euo pipefail
BIN=$1 SOCKETS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
psql_in() { "$BIN/psql" -X -q -At -h "$SOCKETS" -U postgres -v ON_ERROR_STOP=1 -d "$@"; }
check() { if [ "$2" = t ]; then echo "ok $1"; else echo "not ok $1 ($2)"; fi; }

setup_database() {
    "$BIN/createdb" -h "$SOCKETS" -U postgres "$1"
    psql_in "$1" <<'SQL'
CREATE EXTENSION tscoll;
SELECT tscoll.create_collection('expiring', 't', 'm', expire_after_seconds => 3600) \g /dev/null
CREATE TABLE ttl_log (n bigint, old boolean);
CREATE SEQUENCE ttl_number;
SQL
}

# Waits (at most 60 s) until the expired measurements of a database are gone.
wait_for_expiry() {
    for _ in $(seq 300); do
        [ "$(psql_in "$1" -c "SELECT count(*) FROM expiring WHERE t < now() - interval '1 day'")" = 0 ] && return
        sleep 0.2
    done
}

# Exactly the fresh measurements are left: nothing unexpired was deleted.
exact() {
    psql_in "$1" -c "SELECT (SELECT count(*) FROM expiring) = (SELECT count(*) FROM ttl_log WHERE NOT old)
                        AND (SELECT count(*) FROM ttl_log WHERE old) > 0"
}

setup_database ttl_a
setup_database ttl_b
psql_in postgres -c "ALTER SYSTEM SET tscoll.ttl_monitor_sleep_secs = 1" -c "SELECT pg_reload_conf()" >/dev/null
for db in ttl_a ttl_b; do
    "$BIN/pgbench" -h "$SOCKETS" -U postgres -n -c 2 -j 2 -T 5 -f "$HERE/ttl.pgbench" "$db" \
        >/dev/null 2>&1 &
done
wait
for db in ttl_a ttl_b; do
    wait_for_expiry "$db"
    check "ttl_expires_while_inserting_$db" "$(exact "$db")"
done
"$BIN/dropdb" -h "$SOCKETS" -U postgres ttl_a
setup_database ttl_c
"$BIN/pgbench" -h "$SOCKETS" -U postgres -n -c 2 -j 2 -t 200 -f "$HERE/ttl.pgbench" ttl_c >/dev/null 2>&1
wait_for_expiry ttl_c
check "ttl_after_drop_and_create_database" "$(exact ttl_c)"
check "ttl_monitor_without_errors" "$(psql_in ttl_c -c "SELECT coalesce(sum(errors), 0) = 0
    FROM tscoll.ttl_status() WHERE database IN ('ttl_b', 'ttl_c')")"
