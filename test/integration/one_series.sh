#!/usr/bin/env bash
# Concurrent writers of one series fill buckets as one writer would, within
# one bucket per writer (SPEC §4.2, doc/ARCHITECTURE.md "Assigning
# measurements to buckets"): CLIENTS pgbench connections append single rows
# to one series of a collection with a meta field (reopened through its
# index) and of one without (through the catalog's archived buckets alone).
# Then the same with ten rows per transaction, sent as one pipeline of the
# extended protocol, whose statements are deferred to the commit.
# Runs on run.sh's instance; prints "ok <check>" or "not ok <check>".
#   one_series.sh <postgres bin dir> <work dir> <clients>
set -euo pipefail
BIN=$1 WORK=$2 CLIENTS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
ROWS_PER_CLIENT=1500
PSQL=("$BIN/psql" -X -q -At -F " " -h "$WORK" -U postgres -v ON_ERROR_STOP=1 -d tscoll_it)
"${PSQL[@]}" <<SQL
SELECT tscoll.create_collection('one_meta', 't', 'm', 'seconds') \\g /dev/null
SELECT tscoll.create_collection('one_plain', 't', NULL, 'seconds') \\g /dev/null
SELECT tscoll.create_collection('one_piped', 't', 'm', 'seconds') \\g /dev/null
CREATE SEQUENCE one_series_number;
CREATE SEQUENCE one_piped_number;
SQL
"$BIN/pgbench" -h "$WORK" -U postgres -n -c "$CLIENTS" -j "$CLIENTS" -t "$ROWS_PER_CLIENT" \
    -f "$HERE/one_series.pgbench" tscoll_it >"$WORK/one_series.log" 2>&1 || true
"$BIN/pgbench" -h "$WORK" -U postgres -n -M extended -c "$CLIENTS" -j "$CLIENTS" \
    -t "$((ROWS_PER_CLIENT / 10))" -f "$HERE/one_series_piped.pgbench" tscoll_it \
    >"$WORK/one_series_piped.log" 2>&1 || true
rows=$((CLIENTS * ROWS_PER_CLIENT))
# One writer makes ceil(rows / 100) buckets (the count limit, run.sh).
for c in one_meta one_plain one_piped; do
    "${PSQL[@]}" -c "SELECT '# $c: ' || count(*) || ' buckets for $rows measurements' FROM tscoll.buckets('$c')"
    "${PSQL[@]}" -c "SELECT 'one_series_writers_share_buckets_$c',
                            sum((control->>'count')::int) = $rows
                            AND count(*) <= ceil($rows / 100.0) + $CLIENTS
                       FROM tscoll.buckets('$c')" |
        while read -r name holds; do
            if [ "$holds" = t ]; then echo "ok $name"; else echo "not ok $name"; fi
        done
done
