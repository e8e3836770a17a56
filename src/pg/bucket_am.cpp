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
// This is where bucket-level behaviour belongs as it arrives: validating
// rows written directly and telling the bucket catalog which buckets a
// direct write touched (see doc/ARCHITECTURE.md).
extern "C" {
#include "postgres.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "catalog/pg_am_d.h"
}

#include "pg/guard.hpp"

namespace {

TableAmRoutine bucket_routine;

// Runs `call` with `table` presenting heap's routine; restores ours on every
// exit, error included.
template <typename Call>
void as_heap(Relation table, const Call &call) {
    const TableAmRoutine *ours = table->rd_tableam;
    table->rd_tableam = GetHeapamTableAmRoutine();
    PG_TRY();
    { call(); }
    PG_FINALLY();
    { table->rd_tableam = ours; }
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
            tuples = GetHeapamTableAmRoutine()->index_build_range_scan(
                table, index, index_info, allow_sync, anyvisible, progress, start_block, num_blocks,
                callback, callback_state, scan);
        });
        return tuples;
    });
}

void index_validate_scan(Relation table, Relation index, IndexInfo *index_info, Snapshot snapshot,
                         ValidateIndexState *state) {
    tscoll::pg::guarded([&] {
        as_heap(table, [&] {
            GetHeapamTableAmRoutine()->index_validate_scan(table, index, index_info, snapshot,
                                                           state);
        });
    });
}

}  // namespace

TSCOLL_FUNCTION(tscoll_buckets_handler) {
    if (bucket_routine.type != T_TableAmRoutine) {
        bucket_routine = *GetHeapamTableAmRoutine();
        bucket_routine.relation_toast_am = toast_am;
        bucket_routine.index_build_range_scan = index_build_range_scan;
        bucket_routine.index_validate_scan = index_validate_scan;
    }
    PG_RETURN_POINTER(&bucket_routine);
}
