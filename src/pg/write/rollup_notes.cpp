// Noting the rollup buckets a write changes (rollup_notes.hpp).
extern "C" {
#include "postgres.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
}

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/search_path.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/ttl/ttl_monitor.hpp"
#include "pg/write/rollup_notes.hpp"

namespace tscoll::pg {

namespace {

constexpr const char *kStorages =
    "SELECT storage::oid FROM tscoll.rollups WHERE collection = $1 ORDER BY 1";

// A bucket already noted is noted again only when $4 says so: a writer
// whose reads use a snapshot older than the note (REPEATABLE READ) would
// not see its own writes in the rollup through it. Otherwise the note is
// shared: a refresh cannot clear it while this writer holds its lock.
constexpr const char *kNote =
    "INSERT INTO tscoll.rollup_changes (rollup, bucket) "
    "SELECT DISTINCT r.storage, b.bucket "
    "  FROM tscoll.rollups r, unnest($2::timestamptz[], $3::timestamptz[]) t(lo, hi), "
    "       tscoll._rollup_buckets_between(r.unit, r.seconds, t.lo, t.hi) b(bucket) "
    " WHERE r.collection = $1 "
    "   AND ($4 OR NOT EXISTS (SELECT FROM tscoll.rollup_changes c "
    "                           WHERE c.rollup = r.storage AND c.bucket = b.bucket))";

// Kept for the session, like the insert path's other plans, and generic:
// a custom plan for each write would cost more than the note.
SPIPlanPtr kept_plan(SPIPlanPtr &plan, const char *query, int nargs, Oid *types) {
    if (plan == nullptr) {
        SPIPlanPtr p = SPI_prepare_cursor(query, nargs, types, CURSOR_OPT_GENERIC_PLAN);
        if (p == nullptr || SPI_keepplan(p) != 0)
            elog(ERROR, "SPI_prepare failed for \"%s\"", query);
        plan = p;
    }
    return plan;
}

// No C++ object lives here: PostgreSQL errors pass through. `lo` and `hi`
// are timestamptz arrays. Without JIT: the generic plan's estimates (an
// array of unknown length, a set-returning function) pass jit_above_cost,
// and compiling it would cost more than the note, at each write.
void note_with_spi(Oid view, Datum lo, Datum hi) {
    static SPIPlanPtr storages = nullptr, note = nullptr;
    int guc_level = NewGUCNestLevel();
    (void)set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                            false);
    Oid storage_types[] = {OIDOID};
    Datum storage_values[] = {ObjectIdGetDatum(view)};
    int rc = SPI_execute_snapshot(kept_plan(storages, kStorages, 1, storage_types), storage_values,
                                  nullptr, GetLatestSnapshot(), InvalidSnapshot, true, false, 0);
    if (rc != SPI_OK_SELECT)
        elog(ERROR, "reading tscoll.rollups failed: %s", SPI_result_code_string(rc));
    if (SPI_processed == 0) {
        AtEOXact_GUC(true, guc_level);
        return;
    }
    for (uint64 i = 0; i < SPI_processed; i++) {
        bool isnull = false;
        Datum storage = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
        LockRelationOid(DatumGetObjectId(storage), RowExclusiveLock);
    }
    Oid note_types[] = {OIDOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID, BOOLOID};
    Datum note_values[] = {ObjectIdGetDatum(view), lo, hi,
                           BoolGetDatum(IsolationUsesXactSnapshot())};
    rc = SPI_execute_snapshot(kept_plan(note, kNote, 4, note_types), note_values, nullptr,
                              GetLatestSnapshot(), InvalidSnapshot, false, false, 0);
    if (rc != SPI_OK_INSERT)
        elog(ERROR, "noting rollup changes failed: %s", SPI_result_code_string(rc));
    AtEOXact_GUC(true, guc_level);
}

}  // namespace

void note_rollup_changes(Oid view, const std::vector<TimestampTz> &lo,
                         const std::vector<TimestampTz> &hi) {
    if (lo.empty())
        return;
    std::vector<Datum> lo_datums(lo.size()), hi_datums(hi.size());
    std::transform(lo.begin(), lo.end(), lo_datums.begin(),
                   [](TimestampTz t) { return TimestampTzGetDatum(t); });
    std::transform(hi.begin(), hi.end(), hi_datums.begin(),
                   [](TimestampTz t) { return TimestampTzGetDatum(t); });
    CatalogSearchPath pinned;
    pg_call([&] {
        auto array = [](std::vector<Datum> &datums) {
            return PointerGetDatum(construct_array(datums.data(), static_cast<int>(datums.size()),
                                                   TIMESTAMPTZOID, sizeof(TimestampTz),
                                                   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
        };
        if (SPI_connect() != SPI_OK_CONNECT)
            elog(ERROR, "SPI_connect failed");
        note_with_spi(view, array(lo_datums), array(hi_datums));
        SPI_finish();
    });
}

void note_rollup_times(Oid view, std::vector<TimestampTz> times) {
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    note_rollup_changes(view, times, times);
}

bool lock_rollups_for_write(CollectionInfo &info) {
    // A create_rollup committed before this lock is seen by the descriptor
    // read after it; one that starts later waits for this transaction.
    pg_call([&] { LockRelationOid(info.bucket_table, RowExclusiveLock); });
    if (std::optional<CollectionInfo> current = find_collection(info.view))
        info.rollup_storages = current->rollup_storages;
    for (Oid storage : info.rollup_storages)
        pg_call([&] { LockRelationOid(storage, RowExclusiveLock); });
    return !info.rollup_storages.empty();
}

namespace {

// The bucket rows changed by the statements running, by collection view.
struct PendingNotes {
    std::vector<TimestampTz> lo, hi;
};
std::map<Oid, PendingNotes> pending_notes;

void note_pending(XactEvent event, void *) {
    if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
        pending_notes.clear();
    else if (event == XACT_EVENT_PRE_COMMIT || event == XACT_EVENT_PRE_PREPARE)
        guarded([] { flush_rollup_notes(); });
}

}  // namespace

bool tracks_bucket_rows(Oid bucket_table) {
    if (TrustedBucketWrites::active() || expiring_buckets())
        return false;
    std::optional<CollectionInfo> info = find_collection_of_bucket_table(bucket_table);
    return info && !info->rollup_storages.empty();
}

void note_bucket_row(Oid bucket_table, TimestampTz lo, TimestampTz hi) {
    std::optional<CollectionInfo> info = find_collection_of_bucket_table(bucket_table);
    if (!info)
        return;
    // Before the row changes: the lock order of every writer.
    for (Oid storage : info->rollup_storages)
        pg_call([&] { LockRelationOid(storage, RowExclusiveLock); });
    PendingNotes &notes = pending_notes[info->view];
    notes.lo.push_back(lo);
    notes.hi.push_back(hi);
}

namespace {

void note_truncation_of(Oid bucket_table) {
    if (!tracks_bucket_rows(bucket_table))
        return;
    // Read under the lock TRUNCATE takes: no writer adds a row after.
    pg_call([&] { LockRelationOid(bucket_table, AccessExclusiveLock); });
    std::optional<CollectionInfo> info = find_collection_of_bucket_table(bucket_table);
    std::string query = "SELECT array_agg(min_time), array_agg(max_time) FROM " + info->bucket_name;
    Datum *lo = nullptr, *hi = nullptr;
    int count = 0;
    MemoryContext caller = CurrentMemoryContext;  // the arrays outlive SPI
    {
        CatalogSearchPath pinned;
        pg_call([&] {
            if (SPI_connect() != SPI_OK_CONNECT)
                elog(ERROR, "SPI_connect failed");
            if (SPI_execute(query.c_str(), true, 0) != SPI_OK_SELECT)
                elog(ERROR, "SPI_execute failed for \"%s\"", query.c_str());
            bool isnull = false;
            Datum los = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
            if (!isnull) {
                Datum his = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
                MemoryContext outer = MemoryContextSwitchTo(caller);
                deconstruct_array(DatumGetArrayTypeP(los), TIMESTAMPTZOID, sizeof(TimestampTz),
                                  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &lo, nullptr, &count);
                deconstruct_array(DatumGetArrayTypeP(his), TIMESTAMPTZOID, sizeof(TimestampTz),
                                  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &hi, nullptr, &count);
                MemoryContextSwitchTo(outer);
            }
            SPI_finish();
        });
    }
    std::vector<TimestampTz> los(count), his(count);
    for (int i = 0; i < count; i++) {
        los[i] = DatumGetTimestampTz(lo[i]);
        his[i] = DatumGetTimestampTz(hi[i]);
    }
    note_rollup_changes(info->view, los, his);
}

}  // namespace

void note_truncation(const TruncateStmt *statement) {
    ListCell *cell;
    foreach (cell, statement->relations) {
        Oid relid =
            pg_call([&] { return RangeVarGetRelid(lfirst_node(RangeVar, cell), NoLock, true); });
        if (OidIsValid(relid))
            note_truncation_of(relid);
    }
}

void flush_rollup_notes() {
    // Inside a subtransaction, notes wait for the level that owns them:
    // flushed there, a rollback of the subtransaction would take them back.
    if (GetCurrentTransactionNestLevel() > 1)
        return;
    while (!pending_notes.empty()) {
        auto first = pending_notes.begin();
        Oid view = first->first;
        PendingNotes notes = std::move(first->second);
        pending_notes.erase(first);
        note_rollup_changes(view, notes.lo, notes.hi);
    }
}

void register_rollup_note_callbacks() {
    pg_call([] { RegisterXactCallback(note_pending, nullptr); });
}

}  // namespace tscoll::pg

// tscoll._rollups_changed(collection regclass): create_rollup and
// drop_rollup make every session read the collection's descriptor again.
TSCOLL_FUNCTION(tscoll_rollups_changed) {
    Oid view = PG_GETARG_OID(0);
    std::optional<tscoll::pg::CollectionInfo> info = tscoll::pg::find_collection(view);
    tscoll::pg::pg_call([&] {
        CacheInvalidateRelcacheByRelid(view);
        if (info)
            CacheInvalidateRelcacheByRelid(info->bucket_table);
    });
    PG_RETURN_VOID();
}
