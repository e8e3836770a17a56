#!/usr/bin/env bash
# tscoll's benchmark (bench/README.md): sets up and starts the local instance
# (scripts/start.sh), then runs bench.py against it in a fresh database.
# Flags go to bench.py: bench/run.sh --help; bench/run.sh --citus [flags]
# runs bench/citus.py instead.
source "$(dirname "$0")/../scripts/lib.sh"
"$ROOT/scripts/deps.sh" python3 python3-psycopg
"$ROOT/scripts/start.sh" >/dev/null
export PGHOST=$ROOT/.pg/run PGPORT=${TSCOLL_PORT:-5499} PGUSER=postgres
export PATH=$PG_BIN:$PATH
if [ "${1:-}" = --citus ]; then
    # bench/citus.py: the same on a Citus coordinator and 2 workers, which
    # test/citus/cluster.sh starts on this machine (Citus built once from
    # ../shared/vendor when it is not installed).
    shift
    [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] || bash "$ROOT/../shared/vendor/build-citus.sh"
    CLUSTER=$ROOT/.pg/citus CITUS_PORT=${TSCOLL_CITUS_PORT:-5620}
    owned_dir "$CLUSTER"
    as_server_user bash "$ROOT/test/citus/cluster.sh" start "$PG_BIN" "$CLUSTER/nodes" "$CITUS_PORT"
    trap 'as_server_user bash "$ROOT/test/citus/cluster.sh" stop "$PG_BIN" "$CLUSTER/nodes"' EXIT
    export TSCOLL_CITUS_DSN="host=$CLUSTER/nodes port=$CITUS_PORT user=postgres dbname=tscoll_citus"
    /usr/bin/python3 "$ROOT/bench/citus.py" "$@"
    exit
fi
exec /usr/bin/python3 "$ROOT/bench/bench.py" "$@"
