#!/usr/bin/env bash
# Scale-out test (SPEC §14): a coordinator and two workers on loopback
# (cluster.sh), a collection distributed over them and the same readings in
# an undistributed collection (setup.sql); then every TSBS query of the
# benchmark, in its own and in its natural spellings, must give the same
# rows on both, and so must meta updates, deletes, TTL and concurrent
# inserts from 4 coordinator sessions (checks.sql). Prints a TAP plan, then
# "ok <check>" or "not ok <check>" per check. Runs as the server user.
#   run.sh <postgres bin dir> <work dir> <bench query dir>
set -uo pipefail
BIN=$1 WORK=$2 QUERIES=$3
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=5710 HOSTS=20 HOURS=6
export DB=tscoll_citus
# Citus cannot run a LATERAL subquery with LIMIT that references another
# table over a distributed table (lastpoint.lateral), whatever the table.
QUERY_FILES=()
for file in "$QUERIES"/tscoll/*.sql "$QUERIES"/tscoll-natural/*.sql; do
    [[ $file == *lastpoint.lateral* ]] || QUERY_FILES+=("$file")
done
echo "1..$((2 + ${#QUERY_FILES[@]} + $(grep -c "^SELECT '" "$HERE/checks.sql")))"
mkdir -p "$WORK"
trap 'bash "$HERE/cluster.sh" stop "$BIN" "$WORK/cluster"' EXIT
if bash "$HERE/cluster.sh" start "$BIN" "$WORK/cluster" "$PORT" >"$WORK/cluster.log" 2>&1; then
    echo "ok cluster_started"
else
    echo "not ok cluster_started"
    tail -n 20 "$WORK/cluster.log" "$WORK"/cluster/*.log
    exit 0
fi
PSQL=("$BIN/psql" -X -q -h "$WORK/cluster" -p "$PORT" -U postgres -d "$DB" -v ON_ERROR_STOP=1)
cd "$WORK"
if "${PSQL[@]}" -v hosts=$HOSTS -v hours=$HOURS -f "$HERE/setup.sql" >"$WORK/setup.log" 2>&1; then
    echo "ok collections_written"
else
    echo "not ok collections_written"
    tail -n 20 "$WORK/setup.log"
fi

# A query file with its parameters, on collection $2.
query_text() {
    local file=$1 collection=$2 start='2016-01-01 00:00:00+00' end="2016-01-01 0$HOURS:00:00+00"
    case $(basename "$file" .sql) in
        single-groupby-1-1-1*) start='2016-01-01 05:00:00+00' ;;
        groupby-orderby-limit*) end='2016-01-01 03:30:00+00' ;;
    esac
    sed -e '/^--/d' -e 's/;[[:space:]]*$//' -e "s/:'host'/'host_3'/g" \
        -e "s/:'start'/'$start'/g" -e "s/:'end'/'$end'/g" \
        -e "s/\\bcpu\\b/$collection/g" "$file"
}

for file in "${QUERY_FILES[@]}"; do
    name=query_$(basename "$(dirname "$file")")_$(basename "$file" .sql)
    sql="SELECT same_results(\$q\$$(query_text "$file" cpu)\$q\$, \$q\$$(query_text "$file" cpu_local)\$q\$)"
    if out=$("${PSQL[@]}" -At -c "$sql" 2>&1) && [ "$out" = t ]; then
        echo "ok $name"
    else
        echo "not ok $name"
        echo "$out" | head -n 5 | sed 's/^/# /'
    fi
done

# 4 coordinator sessions insert single rows into 8 series of a distributed
# collection, each row also into a plain table.
"${PSQL[@]}" <<SQL >"$WORK/concurrent.log" 2>&1
SET client_min_messages = warning;
SELECT tscoll.create_collection('events', 't', 'm') \\g /dev/null
SELECT tscoll.distribute_collection('events', 4) \\g /dev/null
CREATE TABLE expected (t timestamptz, m jsonb, n bigint);
CREATE SEQUENCE measurement_number;
SQL
"$BIN/pgbench" -h "$WORK/cluster" -p "$PORT" -U postgres -n -c 4 -j 4 -t 500 \
    -f "$HERE/insert.pgbench" "$DB" >"$WORK/pgbench.log" 2>&1 || tail -n 20 "$WORK/pgbench.log"

"${PSQL[@]}" -v hosts=$HOSTS -v hours=$HOURS -v rows=2000 -f "$HERE/checks.sql" 2>&1 |
    awk '$2 == "t" { print "ok " $1; next } NF == 2 && ($2 == "f" || $2 == "") { print "not ok " $1; next } { print "# " $0 }'
