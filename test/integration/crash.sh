#!/usr/bin/env bash
# Crash recovery, in an instance of its own: 4 clients insert (some
# transactions rolled back; appends written into tails in place, the
# fourth's tails merged), a fifth inserts and DELETEs part of a series, a
# sixth inserts expired data and runs TTL passes while the TTL monitor runs
# too, a seventh folds tails over and over; then the postmaster and all its
# children are killed with SIGKILL, the server restarts (crash recovery),
# and crash_checks.sql compares the collection with what the clients saw
# acknowledged. Then inserts must go into the reopened buckets. Prints one
# "ok"/"not ok" line per check. Runs as the server user.
#   crash.sh <postgres bin dir> <work dir> [seconds of load before the kill]
set -euo pipefail
BIN=$1 WORK=$2 LOAD_SECONDS=${3:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$WORK/data LOGS=$WORK/logs
rm -rf "$WORK"
mkdir -p "$WORK" "$LOGS"
"$BIN/initdb" -D "$DATA" -A trust -U postgres >"$WORK/initdb.log" 2>&1
cat >>"$DATA/postgresql.conf" <<CONF
shared_preload_libraries = 'tscoll'
listen_addresses = ''
unix_socket_directories = '$WORK'
fsync = off  # the OS survives a process kill: what was written is there
tscoll.ttl_monitor_sleep_secs = 1
restart_after_crash = off
CONF
start() { "$BIN/pg_ctl" -D "$DATA" -l "$WORK/server.log" -w start >/dev/null; }
start
trap '"$BIN/pg_ctl" -D "$DATA" -m immediate stop >/dev/null 2>&1 || true' EXIT
PSQL=("$BIN/psql" -X -q -h "$WORK" -U postgres -v ON_ERROR_STOP=1)
"$BIN/createdb" -h "$WORK" -U postgres crash
"${PSQL[@]}" -d crash <<'SQL'
CREATE EXTENSION tscoll;
SELECT tscoll.create_collection('c', 't', 'm', expire_after_seconds => 3600) \g /dev/null
SQL

# Client k, transaction j: 5 measurements of series "client_k", times
# moving forward; every 10th transaction is rolled back. "\echo" runs only
# once COMMIT or ROLLBACK has been acknowledged. Client 4's series has a
# meta of 500 bytes (a bucket keeps 8 tails) and its measurements 128 bytes
# more, so that its bucket rows pass 2 kB soon and its tails are merged
# (doc/ARCHITECTURE.md, "Tails"), not only folded.
inserter_script() {
    awk -v k="$1" -v base="$BASE" 'BEGIN {
        pad = (k == 4) ? ", '"'"'p'"'"', repeat(md5(r::text), 4)" : ""
        long = ""
        if (k == 4) for (i = 0; i < 500; i++) long = long "x"
        for (j = 0; j < 50000; j++) {
            rb = (j % 10 == 9)
            print "BEGIN;"
            printf "INSERT INTO c (t, m, doc) SELECT timestamptz '"'"'%s'"'"' + (%d * 5 + r) * interval '"'"'100 ms'"'"', '"'"'\"client_%d%s\"'"'"', jsonb_build_object('"'"'k'"'"', %d, '"'"'j'"'"', %d, '"'"'r'"'"', r%s%s) FROM generate_series(0, 4) r;\n", base, j, k, long, k, j, pad, rb ? ", '"'"'rb'"'"', true" : ""
            print rb ? "ROLLBACK;" : "COMMIT;"
            printf "\\echo %d %s\n", j, rb ? "r" : "c"
        }
    }'
}

# Batch b: 20 measurements of series "doomed" (v = 0..19), then a DELETE of
# the even ones: partial buckets rewritten.
deleter_script() {
    awk -v base="$BASE" 'BEGIN {
        for (b = 0; b < 50000; b++) {
            printf "INSERT INTO c (t, m, doc) SELECT timestamptz '"'"'%s'"'"' + (%d * 20 + v) * interval '"'"'10 ms'"'"', '"'"'\"doomed\"'"'"', jsonb_build_object('"'"'b'"'"', %d, '"'"'v'"'"', v) FROM generate_series(0, 19) v;\n", base, b, b
            printf "\\echo inserted %d\n", b
            # Retried on 40001: a fold of the tails it read may commit while it waits.
            print "DO $$ BEGIN FOR attempt IN 1..10 LOOP BEGIN DELETE FROM c WHERE m = '"'"'\"doomed\"'"'"' AND (doc->>'"'"'v'"'"')::int % 2 = 0; EXIT; EXCEPTION WHEN serialization_failure THEN NULL; END; END LOOP; END $$;"
            printf "\\echo deleted %d\n", b
        }
    }'
}

# Batch b: 20 expired measurements of series "old_<b % 10>", then a TTL pass.
expirer_script() {
    awk -v base="$BASE" 'BEGIN {
        for (b = 0; b < 50000; b++) {
            printf "INSERT INTO c (t, m, doc) SELECT timestamptz '"'"'2020-01-01'"'"' + (%d * 20 + v) * interval '"'"'1 s'"'"', '"'"'\"old_%d\"'"'"', jsonb_build_object('"'"'ob'"'"', %d, '"'"'v'"'"', v) FROM generate_series(0, 19) v;\n", b, b % 10, b
            printf "\\echo inserted %d\n", b
            print "SELECT tscoll.run_ttl_pass() \\g /dev/null"
            printf "\\echo expired %d\n", b
        }
    }'
}

# Folds every bucket's tails again and again, so that the kill may come
# while a fold (bucket row rewritten, tails deleted) is in progress; 10
# times a second, so that client 4's tails also reach their limit between
# folds and are merged.
folder_script() {
    for _ in $(seq 1 20000); do
        echo "SELECT tscoll.fold_tails('c') AS folded, pg_sleep(0.1) \gset"
        echo '\echo :folded'
    done
}

# Half an hour ago: far from expiring (1 hour), whatever the clients reach.
BASE=$(date -u -d '-30 min' '+%Y-%m-%d %H:%M:%S+00')
for k in 1 2 3 4; do
    inserter_script "$k" >"$WORK/client_$k.sql"
done
deleter_script >"$WORK/deleter.sql"
expirer_script >"$WORK/expirer.sql"
folder_script >"$WORK/folder.sql"
pids=()
for name in client_1 client_2 client_3 client_4 deleter expirer folder; do
    "${PSQL[@]}" -d crash -f "$WORK/$name.sql" >"$LOGS/$name.log" 2>"$LOGS/$name.err" &
    pids+=($!)
done
sleep "$LOAD_SECONDS"

# The crash: SIGKILL to the postmaster and to every process it started.
# Stopped first, so that it starts no process (a backend, the TTL
# worker) between the listing and the kill: one started then would outlive
# it, holding the shared memory the restart needs.
postmaster=$(head -n 1 "$DATA/postmaster.pid")
kill -STOP "$postmaster"
children=$(pgrep -P "$postmaster" || true)
kill -9 "$postmaster" $children
for pid in "${pids[@]}"; do wait "$pid" || true; done
# Anything but the lost connection the clients report is worth showing.
cat "$LOGS"/*.err | grep -v 'connection\|closed\|terminated\|server\|lost\|before or while\|^\s*$' |
    sed 's/^/# /' | head -n 5 || true
while pgrep -P "$postmaster" >/dev/null 2>&1 || kill -0 "$postmaster" 2>/dev/null; do sleep 0.1; done
echo "# killed after $(wc -l <"$LOGS/client_1.log") + $(wc -l <"$LOGS/client_2.log") + $(wc -l <"$LOGS/client_3.log") + $(wc -l <"$LOGS/client_4.log") acknowledged inserter transactions"

# "k j c|r" per acknowledged transaction; "who inserted|deleted|expired b" per batch.
for k in 1 2 3 4; do sed "s/^/$k /" "$LOGS/client_$k.log"; done >"$LOGS/acked.log"
for who in deleter expirer; do sed "s/^/$who /" "$LOGS/$who.log"; done >"$LOGS/batches.log"

if start 2>"$WORK/restart.err"; then echo "ok crash_restart"; else
    echo "not ok crash_restart"
    { cat "$WORK/restart.err"; tail -n 5 "$WORK/server.log"; } | sed 's/^/# /'
    exit 0
fi
grep -q 'database system was not properly shut down' "$WORK/server.log" &&
    echo "ok crash_recovery_ran" || echo "not ok crash_recovery_ran"
# Appends are written in place into tails of up to 15 of these (3 x 5):
# a tail of more is a merge.
echo "# client 4's merged tails at the crash: $("${PSQL[@]}" -d crash -Atc "SELECT count(*) FROM \"system.buckets.c\" WHERE control ? 'tail' AND (control->>'count')::int > 15 AND meta::text LIKE '\"client_4%'")"
echo "# tails written in place at the crash: $("${PSQL[@]}" -d crash -Atc "SELECT count(*) FROM \"system.buckets.c\" WHERE control->'tail' ? 'first'")"
"${PSQL[@]}" -d crash -v logs="$LOGS" -f "$HERE/crash_checks.sql" |
    while read -r name holds; do
        if [ "$holds" = t ]; then echo "ok $name"; else echo "not ok $name"; fi
    done
