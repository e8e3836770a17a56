#!/usr/bin/env bash
# The README's second command: runs every test layer and ends with
# "N passed, N failed" summed over all of them. Exit status 1 on any failure.
#   unit        GoogleTest unit tests of src/core (CMake + ctest)
#   unit-asan   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   regress     pg_regress, temporary instance with tscoll preloaded
#   isolation   pg_isolation_regress: concurrent sessions, preloaded
#   nopreload   pg_regress, temporary instance without preloading
#   fuzz        libFuzzer on the bucket data decoder, TSCOLL_FUZZ_SECONDS (60)
#   integration 8 pgbench clients x 20,000 single-row inserts, then checks;
#               TTL, dump/restore, ALTER EXTENSION UPDATE from 0.1.0, a crash
#   citus       a Citus coordinator and 2 workers: a distributed collection
#               against an undistributed one (builds Citus when missing)
#   docs        doc/REFERENCE.md documents every public function of sql/
# Results and diffs of pg_regress end up in build/<layer>/.
# TSCOLL_TEST_LAYERS="regress isolation" runs only those layers, and
# TSCOLL_REGRESS_TESTS="copy_from tails" only those regression tests
# (development).
source "$(dirname "$0")/lib.sh"

"$ROOT/scripts/deps.sh"
"$ROOT/scripts/build.sh"
ensure_server_user
# The boundary tests' entry points live in a library of their own.
log "building the test library tscoll_probes"
make -s -C "$ROOT/test/probes" PG_CONFIG="$PG_CONFIG"
# test/integration/upgrade.sh creates the extension at 0.1.0 from its script.
UPGRADE_FROM=$ROOT/test/upgrade/tscoll--0.1.0.sql
EXTENSION_DIR=$("$PG_CONFIG" --sharedir)/extension
if is_root; then
    make -s -C "$ROOT/test/probes" install PG_CONFIG="$PG_CONFIG"
    install -m 644 "$UPGRADE_FROM" "$EXTENSION_DIR/"
else
    sudo make -s -C "$ROOT/test/probes" install PG_CONFIG="$PG_CONFIG"
    sudo install -m 644 "$UPGRADE_FROM" "$EXTENSION_DIR/"
fi

BUILD=$ROOT/build
# The server user may not be able to enter the checkout (e.g. under /root):
# pg_regress runs from a staging copy of test/ that it owns.
STAGE=$(mktemp -d /tmp/tscoll-test.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
cp -r "$ROOT/test" "$STAGE/test"
mkdir -p "$STAGE/bench" && cp -r "$ROOT/bench/queries" "$STAGE/bench/queries"
# pg_regress's inputs where PGXS keeps them: sql/<test>.sql, expected/.
mkdir -p "$STAGE/sql"
regress_tests() {
    if [ -n "${TSCOLL_REGRESS_TESTS:-}" ]; then echo "$TSCOLL_REGRESS_TESTS"; return; fi
    (cd "$ROOT/sql" && ls *.sql | grep -v '^tscoll--' | sed 's/\.sql$//')
}
for t in $(regress_tests); do cp "$ROOT/sql/$t.sql" "$STAGE/sql/"; done
cp -r "$ROOT/expected" "$STAGE/expected"
owned_dir "$STAGE"
PASSED=0
FAILED=0
SUMMARY=()

LAYERS=${TSCOLL_TEST_LAYERS:-unit unit-asan fuzz regress isolation nopreload integration citus docs}
wanted() { [[ " $LAYERS " == *" $1 "* ]]; }

# Adds one layer's counts: layer passed failed.
count() {
    PASSED=$((PASSED + $2))
    FAILED=$((FAILED + $3))
    SUMMARY+=("$(printf '%-10s %4d passed, %d failed' "$1" "$2" "$3")")
}

# Builds and runs the unit tests: layer, extra CMake flags.
run_unit() {
    local layer=$1 flags=$2
    log "unit tests of src/core: $layer"
    local out
    if ! out=$(cmake -S "$ROOT" -B "$BUILD/$layer" -DCMAKE_BUILD_TYPE=Debug $flags 2>&1 &&
        cmake --build "$BUILD/$layer" -j"$(nproc)" 2>&1); then
        echo "$out" | tail -n 40
        count "$layer" 0 1
        return
    fi
    out=$(cd "$BUILD/$layer" && ctest --output-on-failure 2>&1) || true
    echo "$out" | grep -E 'tests passed|Failed|\*\*\*' || true
    local total failed
    total=$(echo "$out" | sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p')
    failed=$(echo "$out" | sed -n 's/.*, \([0-9]*\) tests failed out of.*/\1/p')
    if [ -z "$total" ]; then count "$layer" 0 1; return; fi
    count "$layer" $((total - failed)) "$failed"
}

# Runs pg_regress (or another runner, e.g. isolation/pg_isolation_regress)
# as the server user: layer, runner, input dir (in the staging copy),
# config (in test/), then the runner's options and tests.
run_pg_regress() {
    local layer=$1 runner=$2 inputdir=$STAGE/$3 config=$STAGE/test/$4
    shift 4
    log "$(basename "$runner"): $layer"
    local out outdir=$STAGE/$layer
    out=$(SERVER_CWD=$STAGE as_server_user \
        "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/$runner" \
        --temp-instance="$outdir/instance" --temp-config="$config" \
        --bindir="$PG_BIN" --inputdir="$inputdir" --outputdir="$outdir" \
        --dbname=tscoll_regress "$@" 2>&1) || true
    set -- $(printf '%s\n' "$@" | grep -v '^--')
    rm -rf "${BUILD:?}/$layer"
    mkdir -p "$BUILD/$layer"
    cp -r "$outdir/results" "$outdir"/regression.* "$BUILD/$layer/" 2>/dev/null || true
    echo "$out" | grep -E '^(test |     |ok |not ok)|FAILED|failed|PANIC|server' || true
    local ok bad
    ok=$(echo "$out" | grep -cE '\.\.\. ok' || true)
    bad=$(echo "$out" | grep -cE '\.\.\. FAILED|\.\.\. failed' || true)
    if [ $((ok + bad)) -ne $# ]; then bad=$(($# - ok)); fi
    if [ "$bad" -gt 0 ] && [ -f "$BUILD/$layer/regression.diffs" ]; then
        echo "--- $BUILD/$layer/regression.diffs (head)"
        head -n 200 "$BUILD/$layer/regression.diffs"
    fi
    count "$layer" "$ok" "$bad"
}

# Builds test/fuzz with clang and runs it for a bounded time from its seeds
# (the corpus it grows stays in build/fuzz/corpus for the next run).
run_fuzz() {
    log "fuzz: bucket data decoder, ${TSCOLL_FUZZ_SECONDS:-60} s"
    local out dir=$BUILD/fuzz
    if ! out=$(cmake -S "$ROOT" -B "$dir" -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTSCOLL_SANITIZE=ON -DTSCOLL_FUZZ=ON 2>&1 &&
        cmake --build "$dir" -j"$(nproc)" --target bucket_data_fuzz 2>&1); then
        echo "$out" | tail -n 40
        count fuzz 0 1
        return
    fi
    mkdir -p "$dir/corpus" "$dir/crashes"
    if out=$("$dir/bucket_data_fuzz" -max_total_time="${TSCOLL_FUZZ_SECONDS:-60}" \
        -artifact_prefix="$dir/crashes/" "$dir/corpus" "$ROOT/test/fuzz/seeds" 2>&1); then
        echo "$out" | grep -E '^Done' || true
        count fuzz 1 0
    else
        echo "$out" | grep -vE '^#[0-9]' | tail -n 40
        count fuzz 0 1
    fi
}

wanted unit && run_unit unit ""
wanted unit-asan && run_unit unit-asan "-DTSCOLL_SANITIZE=ON"
wanted fuzz && run_fuzz
tests_in() { (cd "$ROOT/test/$1" && ls *."$2" | sed "s/\\.$2\$//"); }
wanted regress && run_pg_regress regress regress/pg_regress . regress.conf $(regress_tests)
wanted isolation && run_pg_regress isolation isolation/pg_isolation_regress test/isolation \
    regress.conf --load-extension=tscoll $(tests_in isolation/specs spec)
wanted nopreload && run_pg_regress nopreload regress/pg_regress test/nopreload nopreload.conf nopreload

# Runs test/integration/run.sh: its plan "1..N", then one "ok" line per
# check that holds; anything missing counts as failed.
run_integration() {
    log "integration: concurrent inserts"
    local out planned ok
    out=$(SERVER_CWD=$STAGE as_server_user bash "$STAGE/test/integration/run.sh" \
        "$PG_BIN" "$STAGE/integration" 2>&1) || true
    echo "$out"
    planned=$(echo "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
    ok=$(echo "$out" | grep -c '^ok ' || true)
    count integration "$ok" $((${planned:-1} - ok))
}
wanted integration && run_integration

# Runs test/citus/run.sh (TAP, as above) on a coordinator and two workers;
# builds Citus from ../shared/vendor when citus.so is not installed.
run_citus() {
    log "citus: a distributed collection against an undistributed one"
    local out planned ok
    if [ ! -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
        local build=$ROOT/../shared/vendor/build-citus.sh
        if [ ! -x "$build" ] && [ ! -f "$build" ]; then
            echo "citus.so is not installed and $build is missing"
            count citus 0 1
            return
        fi
        if is_root; then bash "$build"; else sudo bash "$build"; fi || { count citus 0 1; return; }
    fi
    out=$(SERVER_CWD=$STAGE as_server_user bash "$STAGE/test/citus/run.sh" \
        "$PG_BIN" "$STAGE/citus" "$STAGE/bench/queries" 2>&1) || true
    echo "$out"
    planned=$(echo "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
    ok=$(echo "$out" | grep -c '^ok ' || true)
    count citus "$ok" $((${planned:-1} - ok))
}
wanted citus && run_citus

# The user's manual covers every public function of sql/.
if wanted docs; then
    log "docs: doc/REFERENCE.md against sql/"
    if "$ROOT/test/docs/reference_covers_sql.sh"; then count docs 1 0; else count docs 0 1; fi
fi

echo
printf '%s\n' "${SUMMARY[@]}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
