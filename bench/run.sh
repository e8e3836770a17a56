#!/usr/bin/env bash
# tscoll's benchmark (bench/README.md): sets up and starts the local instance
# (scripts/start.sh), then runs bench.py against it in a fresh database.
# Flags go to bench.py: bench/run.sh --help
source "$(dirname "$0")/../scripts/lib.sh"
"$ROOT/scripts/deps.sh" python3 python3-psycopg
"$ROOT/scripts/start.sh" >/dev/null
export PGHOST=$ROOT/.pg/run PGPORT=${TSCOLL_PORT:-5499} PGUSER=postgres
export PATH=$PG_BIN:$PATH
exec /usr/bin/python3 "$ROOT/bench/bench.py" "$@"
