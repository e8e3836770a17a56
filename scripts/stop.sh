#!/usr/bin/env bash
# Stops the project-local PostgreSQL started by scripts/start.sh.
source "$(dirname "$0")/lib.sh"

DATA=$ROOT/.pg/data
if [ -f "$DATA/PG_VERSION" ] && as_server_user "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_server_user "$PG_BIN/pg_ctl" -D "$DATA" -w stop
else
    echo "not running"
fi
