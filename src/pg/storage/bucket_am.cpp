// The table access method tscoll_buckets: bucket rows are stored in heap
// format, so that everything heap does (COPY, every scan kind, index
// builds, UPDATE/DELETE, VACUUM, ANALYZE, TRUNCATE, CLUSTER) works on
// bucket tables. The routine is a copy of heap's with these differences:
//
//  * TOAST tables of bucket tables are plain heap tables.
//  * Index builds run heap's code with the relation presenting heap's
//    routine: heap_getnext() refuses any relation whose routine is not
//    heap's own, and heap's index build scans use it.
//
//  * Rows written directly (not by tscoll's own writers) must be valid
//    buckets (doc/REFERENCE.md, Privileges), and a direct UPDATE, DELETE or
//    TRUNCATE makes the bucket catalog forget the collection's series.
extern "C" {
#include "postgres.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "executor/executor.h"
#include "access/table.h"
#include "commands/defrem.h"
#include "optimizer/paths.h"
#include "optimizer/plancat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/snapmgr.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
}

#include <algorithm>
#include <climits>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/bucket.hpp"
#include "core/error.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/catalog/collection.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/pg_time.hpp"
#include "pg/nodes/returning.hpp"
#include "pg/write/rollup_notes.hpp"

namespace tscoll::pg {

namespace {
int trusted_writers = 0;
}

ModificationCount *counted_modification = nullptr;

TrustedBucketWrites::TrustedBucketWrites() {
    trusted_writers++;
}

TrustedBucketWrites::~TrustedBucketWrites() {
    trusted_writers--;
}

void TrustedBucketWrites::reset() {
    trusted_writers = 0;
}

bool TrustedBucketWrites::active() {
    return trusted_writers > 0;
}

}  // namespace tscoll::pg

namespace {

using tscoll::pg::counted_modification;
using tscoll::pg::trusted_writers;

TableAmRoutine bucket_routine;

const TableAmRoutine *heap() {
    return GetHeapamTableAmRoutine();
}

// The collection's time field ("" while the collection is unknown, as
// during a restore before tscoll.collections is loaded).
std::string time_field_of(Oid bucket_table) {
    std::optional<tscoll::pg::CollectionInfo> info =
        tscoll::pg::find_collection_of_bucket_table(bucket_table);
    return info ? info->time_field : std::string();
}

// Bucket table columns: _id, meta, control, data, min_time, max_time.
enum Column { kId = 1, kMeta, kControl, kData, kMinTime, kMaxTime };

tscoll::UnixMicros time_column(TupleTableSlot *slot, int column) {
    bool isnull = false;
    Datum d = slot_getattr(slot, column, &isnull);
    return isnull ? 0 : tscoll::pg::to_unix_micros(DatumGetTimestampTz(d));
}

// Refuses a row written directly that is not a valid bucket.
void check_row(Relation table, TupleTableSlot *slot) {
    if (trusted_writers > 0 || counted_modification != nullptr)
        return;
    tscoll::pg::guarded([&] {
        bool id_null = false, control_null = false, data_null = false;
        Datum id = 0, control = 0, data = 0;
        tscoll::pg::pg_call([&] {
            id = slot_getattr(slot, kId, &id_null);
            control = slot_getattr(slot, kControl, &control_null);
            data = slot_getattr(slot, kData, &data_null);
        });
        if (id_null || control_null || data_null)
            throw tscoll::Error(tscoll::ErrorCode::BadValue,
                                "invalid bucket row: _id, control and data must not be null", {},
                                "Write measurements through the collection's view.");
        const auto *bucket_id = reinterpret_cast<const tscoll::ObjectId *>(DatumGetPointer(id));
        tscoll::BucketData decoded = tscoll::pg::decode_bucket(
            *bucket_id, tscoll::pg::pg_call([&] { return DatumGetByteaPP(data); }));
        tscoll::Value control_value = tscoll::pg::jsonb_to_value(
            tscoll::pg::pg_call([&] { return DatumGetJsonbP(control); }));
        tscoll::check_bucket_row(decoded, control_value, time_field_of(RelationGetRelid(table)),
                                 time_column(slot, kMinTime), time_column(slot, kMaxTime));
    });
}

// The rollups of the collection are noted of a row's times
// (write/rollup_notes.hpp) when an UPDATE or DELETE changes it. Rows
// inserted directly are not noted: a restore inserts them, and the
// rollups' tables it restores already hold them.
void note_for_rollups(Relation table, TupleTableSlot *slot) {
    tscoll::pg::guarded([&] {
        if (!tscoll::pg::tracks_bucket_rows(RelationGetRelid(table)))
            return;
        bool lo_null = false, hi_null = false;
        Datum lo = 0, hi = 0;
        std::string time_field = time_field_of(RelationGetRelid(table));
        tscoll::pg::pg_call([&] {
            lo = slot_getattr(slot, kMinTime, &lo_null);
            hi = slot_getattr(slot, kMaxTime, &hi_null);
            // A tail's max_time is a bound; its latest time is in control.
            bool control_null = false;
            Datum control = slot_getattr(slot, kControl, &control_null);
            JsonbValue tail;
            if (!hi_null && !control_null &&
                getKeyJsonValueFromContainer(&DatumGetJsonbP(control)->root, "tail", 4, &tail))
                hi = TimestampTzGetDatum(tscoll::pg::control_time(DatumGetJsonbP(control), "latest",
                                                                  time_field.c_str()));
        });
        if (!lo_null && !hi_null)
            tscoll::pg::note_bucket_row(RelationGetRelid(table), DatumGetTimestampTz(lo),
                                        DatumGetTimestampTz(hi));
    });
}

TupleTableSlot *stored_version(Relation table, ItemPointer tid);

// The same for the row version at `tid`, before it changes.
void note_stored_for_rollups(Relation table, ItemPointer tid) {
    bool tracked = tscoll::pg::guarded(
        [&] { return tscoll::pg::tracks_bucket_rows(RelationGetRelid(table)); });
    if (!tracked)
        return;
    TupleTableSlot *old = stored_version(table, tid);
    if (old == nullptr)
        return;
    note_for_rollups(table, old);
    ExecDropSingleTupleTableSlot(old);
}

// A translated statement has made the catalog forget before it started.
void forget_series(Relation table) {
    if (trusted_writers == 0 && counted_modification == nullptr)
        tscoll::pg::guarded([&] { tscoll::pg::catalog::forget_series(RelationGetRelid(table)); });
}

void tuple_insert(Relation table, TupleTableSlot *slot, CommandId cid, int options,
                  BulkInsertStateData *bistate) {
    check_row(table, slot);
    heap()->tuple_insert(table, slot, cid, options, bistate);
}

void tuple_insert_speculative(Relation table, TupleTableSlot *slot, CommandId cid, int options,
                              BulkInsertStateData *bistate, uint32 token) {
    check_row(table, slot);
    heap()->tuple_insert_speculative(table, slot, cid, options, bistate, token);
}

void multi_insert(Relation table, TupleTableSlot **slots, int nslots, CommandId cid, int options,
                  BulkInsertStateData *bistate) {
    for (int i = 0; i < nslots; i++)
        check_row(table, slots[i]);
    heap()->multi_insert(table, slots, nslots, cid, options, bistate);
}

// control.count of a bucket row (0 when absent: a row written before
// control had a count is not counted).
uint64 control_count(TupleTableSlot *slot) {
    bool isnull = false;
    Datum control = slot_getattr(slot, kControl, &isnull);
    if (isnull)
        return 0;
    Jsonb *jsonb = DatumGetJsonbP(control);
    JsonbValue key;
    key.type = jbvString;
    key.val.string.val = const_cast<char *>("count");
    key.val.string.len = 5;
    JsonbValue *count = findJsonbValueFromContainer(&jsonb->root, JB_FOBJECT, &key);
    if (count == nullptr || count->type != jbvNumeric)
        return 0;
    return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(count->val.numeric)));
}

// The row version at `tid`, or nullptr; drop it with ExecDropSingleTupleTableSlot.
TupleTableSlot *stored_version(Relation table, ItemPointer tid) {
    TupleTableSlot *slot = table_slot_create(table, nullptr);
    if (heap()->tuple_fetch_row_version(table, tid, SnapshotAny, slot))
        return slot;
    ExecDropSingleTupleTableSlot(slot);
    return nullptr;
}

// A tail that a fold deleted as a row moved elsewhere (write/bucket_store.cpp)
// reads as deleted, so that the executor skips it, except to a DELETE by
// measurement values (ModificationCount::by_measurement), which PostgreSQL
// then fails with 40001.
TM_Result unless_folded(TM_Result result, const TM_FailureData *tmfd) {
    const tscoll::pg::ModificationCount *counted = counted_modification;
    if (result == TM_Updated && ItemPointerIndicatesMovedPartitions(&tmfd->ctid) &&
        !(counted && counted->by_measurement))
        return TM_Deleted;
    return result;
}

TM_Result tuple_update(Relation table, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
                       Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
                       LockTupleMode *lockmode, bool *update_indexes) {
    check_row(table, slot);
    forget_series(table);
    note_stored_for_rollups(table, otid);
    note_for_rollups(table, slot);
    tscoll::pg::ModificationCount *counted = counted_modification;
    TupleTableSlot *old = counted && counted->deleting ? stored_version(table, otid) : nullptr;
    uint64 before = old ? control_count(old) : 0;
    TM_Result result =
        unless_folded(heap()->tuple_update(table, otid, slot, cid, snapshot, crosscheck, wait, tmfd,
                                           lockmode, update_indexes),
                      tmfd);
    if (counted && result == TM_Ok) {
        uint64 after = control_count(slot);
        counted->measurements += counted->deleting ? (before > after ? before - after : 0) : after;
        if (counted->returned && (!counted->deleting || old))
            tscoll::pg::return_measurements(counted->returned, old ? old : slot,
                                            old ? slot : nullptr);
    }
    if (old)
        ExecDropSingleTupleTableSlot(old);
    return result;
}

TM_Result tuple_delete(Relation table, ItemPointer tid, CommandId cid, Snapshot snapshot,
                       Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changing_part) {
    forget_series(table);
    note_stored_for_rollups(table, tid);
    tscoll::pg::ModificationCount *counted = counted_modification;
    TupleTableSlot *old = counted ? stored_version(table, tid) : nullptr;
    TM_Result result = unless_folded(
        heap()->tuple_delete(table, tid, cid, snapshot, crosscheck, wait, tmfd, changing_part),
        tmfd);
    if (old && result == TM_Ok) {
        counted->measurements += control_count(old);
        if (counted->returned)
            tscoll::pg::return_measurements(counted->returned, old, nullptr);
    }
    if (old)
        ExecDropSingleTupleTableSlot(old);
    return result;
}

void relation_set_new_filenode(Relation table, const RelFileNode *node, char persistence,
                               TransactionId *freeze_xid, MultiXactId *min_multi) {
    forget_series(table);
    heap()->relation_set_new_filenode(table, node, persistence, freeze_xid, min_multi);
}

void relation_nontransactional_truncate(Relation table) {
    forget_series(table);
    heap()->relation_nontransactional_truncate(table);
}

// The relations presenting heap's routine now, innermost last.
std::vector<Relation> presenting_heap;

// A relcache invalidation (another session's CREATE INDEX committing during
// an index build) rebuilds an open relation's entry in place, with our
// routine again: present heap's again, before the scan's next heap_getnext().
void present_heap_again(Datum, Oid relid) {
    for (Relation table : presenting_heap)
        if (relid == InvalidOid || RelationGetRelid(table) == relid)
            table->rd_tableam = heap();
}

// Runs `call` with `table` presenting heap's routine; restores ours on every
// exit, error included.
template <typename Call>
void as_heap(Relation table, const Call &call) {
    const TableAmRoutine *ours = table->rd_tableam;
    presenting_heap.push_back(table);
    table->rd_tableam = heap();
    PG_TRY();
    { call(); }
    PG_FINALLY();
    {
        table->rd_tableam = ours;
        presenting_heap.pop_back();
    }
    PG_END_TRY();
}

Oid toast_am(Relation) {
    return HEAP_TABLE_AM_OID;
}

double index_build_range_scan(Relation table, Relation index, IndexInfo *index_info,
                              bool allow_sync, bool anyvisible, bool progress,
                              BlockNumber start_block, BlockNumber num_blocks,
                              IndexBuildCallback callback, void *callback_state,
                              TableScanDesc scan) {
    return tscoll::pg::guarded([&] {
        double tuples = 0;
        as_heap(table, [&] {
            tuples = heap()->index_build_range_scan(table, index, index_info, allow_sync,
                                                    anyvisible, progress, start_block, num_blocks,
                                                    callback, callback_state, scan);
        });
        return tuples;
    });
}

void index_validate_scan(Relation table, Relation index, IndexInfo *index_info, Snapshot snapshot,
                         ValidateIndexState *state) {
    tscoll::pg::guarded([&] {
        as_heap(table,
                [&] { heap()->index_validate_scan(table, index, index_info, snapshot, state); });
    });
}

// ---------------------------------------------------------------------------
// Parallel scans. PostgreSQL gives a table workers by its heap's size, and
// none below min_parallel_table_scan_size, but a bucket table's heap holds
// little more than each bucket's control: its measurements are in TOAST. A
// bucket table gets the workers PostgreSQL would give a heap of its heap and
// TOAST pages together, unless its parallel_workers option says otherwise.

int workers_for_pages(BlockNumber pages) {
    int threshold = std::max(min_parallel_table_scan_size, 1);
    if (pages < static_cast<BlockNumber>(threshold))
        return 0;
    int workers = 1;
    while (pages >= static_cast<BlockNumber>(threshold) * 3 && threshold <= INT_MAX / 9) {
        workers++;
        threshold *= 3;
    }
    return workers;
}

BlockNumber toast_pages(Oid relid) {
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(tuple))
        return 0;
    Oid toast = reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->reltoastrelid;
    ReleaseSysCache(tuple);
    if (!OidIsValid(toast))
        return 0;
    Relation rel = table_open(toast, AccessShareLock);
    BlockNumber pages = RelationGetNumberOfBlocks(rel);
    table_close(rel, AccessShareLock);
    return pages;
}

}  // namespace

void tscoll::pg::size_parallel_scan(Oid relid, RelOptInfo *rel) {
    if (rel->rel_parallel_workers != -1 || !tscoll::pg::is_bucket_table(relid))
        return;
    int workers = workers_for_pages(rel->pages + toast_pages(relid));
    if (workers > 0)
        rel->rel_parallel_workers = workers;
}

bool tscoll::pg::has_heap_pages(Relation rel) {
    return rel->rd_tableam == &bucket_routine || rel->rd_tableam == heap();
}

bool tscoll::pg::is_bucket_table(Oid relid) {
    Oid am = get_table_am_oid("tscoll_buckets", true);
    HeapTuple tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
    if (!HeapTupleIsValid(tuple))
        return false;
    bool result = OidIsValid(am) && reinterpret_cast<Form_pg_class>(GETSTRUCT(tuple))->relam == am;
    ReleaseSysCache(tuple);
    return result;
}

void tscoll::pg::register_bucket_table_callbacks() {
    CacheRegisterRelcacheCallback(present_heap_again, 0);
}

TSCOLL_FUNCTION(tscoll_buckets_handler) {
    if (bucket_routine.type != T_TableAmRoutine) {
        bucket_routine = *heap();
        bucket_routine.relation_toast_am = toast_am;
        bucket_routine.index_build_range_scan = index_build_range_scan;
        bucket_routine.index_validate_scan = index_validate_scan;
        bucket_routine.tuple_insert = tuple_insert;
        bucket_routine.tuple_insert_speculative = tuple_insert_speculative;
        bucket_routine.multi_insert = multi_insert;
        bucket_routine.tuple_update = tuple_update;
        bucket_routine.tuple_delete = tuple_delete;
        bucket_routine.relation_set_new_filenode = relation_set_new_filenode;
        bucket_routine.relation_nontransactional_truncate = relation_nontransactional_truncate;
    }
    PG_RETURN_POINTER(&bucket_routine);
}
