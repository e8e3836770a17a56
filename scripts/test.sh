#!/usr/bin/env bash
# The README's second command: runs every test layer and ends with
# "N passed, N failed" summed over all of them. Exit status 1 on any failure.
#   unit        GoogleTest unit tests of src/core (CMake + ctest)
#   regress     pg_regress, temporary instance with tscoll preloaded
#   nopreload   pg_regress, temporary instance without preloading
source "$(dirname "$0")/lib.sh"

"$ROOT/scripts/deps.sh"
"$ROOT/scripts/build.sh"
ensure_server_user
check_reachable

BUILD=$ROOT/build
owned_dir "$BUILD/regress"
owned_dir "$BUILD/nopreload"
PASSED=0
FAILED=0
SUMMARY=()

# Adds one layer's counts: layer passed failed.
count() {
    PASSED=$((PASSED + $2))
    FAILED=$((FAILED + $3))
    SUMMARY+=("$(printf '%-10s %4d passed, %d failed' "$1" "$2" "$3")")
}

run_unit() {
    log "unit tests (src/core)"
    cmake -S "$ROOT" -B "$BUILD/unit" -DCMAKE_BUILD_TYPE=Debug >/dev/null
    cmake --build "$BUILD/unit" -j"$(nproc)" >/dev/null
    local out
    out=$(cd "$BUILD/unit" && ctest --output-on-failure 2>&1) || true
    echo "$out" | tail -n 25
    local total failed
    total=$(echo "$out" | sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p')
    failed=$(echo "$out" | sed -n 's/.*, \([0-9]*\) tests failed out of.*/\1/p')
    if [ -z "$total" ]; then count unit 0 1; return; fi
    count unit $((total - failed)) "$failed"
}

# Runs pg_regress as the server user: layer, input dir, config, tests...
run_pg_regress() {
    local layer=$1 inputdir=$2 config=$3
    shift 3
    log "pg_regress: $layer"
    local out
    out=$(as_server_user "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
        --temp-instance="$BUILD/$layer/instance" --temp-config="$config" \
        --bindir="$PG_BIN" --inputdir="$inputdir" --outputdir="$BUILD/$layer" \
        --dbname=tscoll_regress "$@" 2>&1) || true
    echo "$out" | grep -E '^(test |     |ok |not ok)|FAILED|failed|PANIC|server' || true
    local ok bad
    ok=$(echo "$out" | grep -cE '\.\.\. ok' || true)
    bad=$(echo "$out" | grep -cE '\.\.\. FAILED|\.\.\. failed' || true)
    if [ $((ok + bad)) -ne $# ]; then bad=$(($# - ok)); fi
    if [ "$bad" -gt 0 ] && [ -f "$BUILD/$layer/regression.diffs" ]; then
        head -n 200 "$BUILD/$layer/regression.diffs"
    fi
    count "$layer" "$ok" "$bad"
}

run_unit
run_pg_regress regress "$ROOT/test" "$ROOT/test/regress.conf" \
    $(cd "$ROOT/test/sql" && ls *.sql | sed 's/\.sql$//')
run_pg_regress nopreload "$ROOT/test/nopreload" /dev/null nopreload

echo
printf '%s\n' "${SUMMARY[@]}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
