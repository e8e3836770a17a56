#!/usr/bin/env bash
# The README's first command: installs the dependencies, builds and installs
# tscoll, starts (or restarts) a project-local PostgreSQL 15 with tscoll
# preloaded, creates a demo collection and prints how to connect.
# Running it again is harmless. scripts/stop.sh stops the server.
source "$(dirname "$0")/lib.sh"

PORT=${TSCOLL_PORT:-5499}
PGDIR=$ROOT/.pg
DATA=$PGDIR/data
SOCKETS=$PGDIR/run
DB=tscoll_demo

"$ROOT/scripts/deps.sh"
"$ROOT/scripts/build.sh"
ensure_server_user
check_reachable
owned_dir "$PGDIR"
owned_dir "$SOCKETS"

if [ ! -f "$DATA/PG_VERSION" ]; then
    log "creating a PostgreSQL 15 instance in $DATA"
    as_server_user "$PG_BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
fi
# Our settings live in their own file, rewritten on every run.
cat >"$DATA/tscoll.conf" <<CONF
shared_preload_libraries = 'tscoll'
port = $PORT
listen_addresses = 'localhost'
unix_socket_directories = '$SOCKETS'
CONF
grep -q "^include_if_exists = 'tscoll.conf'" "$DATA/postgresql.conf" ||
    echo "include_if_exists = 'tscoll.conf'" >>"$DATA/postgresql.conf"
is_root && chown "$RUN_USER" "$DATA/tscoll.conf"

# Restart when running, so that a rebuilt library is loaded.
if as_server_user "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    log "restarting PostgreSQL"
    as_server_user "$PG_BIN/pg_ctl" -D "$DATA" -l "$PGDIR/server.log" -w restart >/dev/null
else
    log "starting PostgreSQL on port $PORT"
    as_server_user "$PG_BIN/pg_ctl" -D "$DATA" -l "$PGDIR/server.log" -w start >/dev/null
fi

PSQL=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKETS" -p "$PORT" -U postgres)
if ! "${PSQL[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"
fi
log "creating the extension and the demo collection"
"${PSQL[@]}" -d "$DB" -f "$ROOT/scripts/demo.sql"

cat <<MSG

tscoll is running (PostgreSQL 15, data in $DATA, log in $PGDIR/server.log).
Connect with:

    psql -h $SOCKETS -p $PORT -U postgres $DB

or over TCP: psql "host=localhost port=$PORT user=postgres dbname=$DB"
Stop it with: scripts/stop.sh
MSG
