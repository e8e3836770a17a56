#!/usr/bin/env bash
# Starts (or stops) a Citus cluster on loopback: a coordinator and two
# workers, three instances with Citus and tscoll preloaded, both extensions
# created in database $DB on each, the workers registered with the
# coordinator. Runs as the server user.
#   cluster.sh start <postgres bin dir> <work dir> [first port]
#   cluster.sh stop  <postgres bin dir> <work dir>
# The coordinator listens on the first port, the workers on the next two.
set -euo pipefail
ACTION=$1 BIN=$2 WORK=$3 PORT=${4:-5610}
DB=${DB:-tscoll_citus}
NODES=(coordinator worker1 worker2)

stop() {
    for node in "${NODES[@]}"; do
        [ -f "$WORK/$node/postmaster.pid" ] &&
            "$BIN/pg_ctl" -D "$WORK/$node" -m immediate stop >/dev/null 2>&1 || true
    done
}

if [ "$ACTION" = stop ]; then stop; exit 0; fi
stop
rm -rf "$WORK"
mkdir -p "$WORK"
for i in "${!NODES[@]}"; do
    node=${NODES[$i]}
    "$BIN/initdb" -D "$WORK/$node" -A trust -U postgres >"$WORK/$node.initdb.log" 2>&1
    cat >>"$WORK/$node/postgresql.conf" <<CONF
shared_preload_libraries = 'citus,tscoll'
listen_addresses = '127.0.0.1'
port = $((PORT + i))
unix_socket_directories = '$WORK'
max_connections = 60
max_worker_processes = 16
fsync = off
citus.shard_count = 8
# the coordinator's TTL monitor expires distributed collections, in small
# batches, every second
tscoll.ttl_monitor_enabled = $([ "$i" -eq 0 ] && echo on || echo off)
tscoll.ttl_monitor_sleep_secs = 1
tscoll.ttl_batch_size = 10
CONF
    "$BIN/pg_ctl" -D "$WORK/$node" -l "$WORK/$node.log" -w start >/dev/null
    "$BIN/createdb" -h "$WORK" -p $((PORT + i)) -U postgres "$DB"
    "$BIN/psql" -X -q -h "$WORK" -p $((PORT + i)) -U postgres -d "$DB" -v ON_ERROR_STOP=1 \
        -c "CREATE EXTENSION citus" -c "CREATE EXTENSION tscoll"
done
"$BIN/psql" -X -q -h "$WORK" -p "$PORT" -U postgres -d "$DB" -v ON_ERROR_STOP=1 \
    -c "SELECT citus_set_coordinator_host('127.0.0.1', $PORT)" \
    -c "SELECT citus_add_node('127.0.0.1', $((PORT + 1)))" \
    -c "SELECT citus_add_node('127.0.0.1', $((PORT + 2)))" >/dev/null
