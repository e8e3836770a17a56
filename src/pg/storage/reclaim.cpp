// Giving back the space of folded tails (reclaim.hpp). PostgreSQL already
// knows how to give back the space of a row dead to every snapshot, short
// of VACUUM: an index scan that meets it marks its entry dead, and btree
// removes marked entries before it splits a page; pruning frees its bytes
// on the heap page. What it lacks is a reason to look: nobody scans the
// index range of a bucket that was folded and closed, and an insert only
// finds a pruned page if the free space map says so. Here the fold's own
// backend does both, in a later transaction, for the rows it noted.
//
// PostgreSQL style: no frame owns an object with a non-trivial destructor.
extern "C" {
#include "postgres.h"
#include "access/detoast.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/toast_internals.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "utils/relcache.h"
#include "catalog/pg_am_d.h"
#include "executor/executor.h"
#include "nodes/pg_list.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/procarray.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include "pg/storage/reclaim.hpp"

namespace tscoll::pg {

namespace {

// The index keys of the noted rows, per btree index of the relation.
struct IndexKeys {
    Oid index;
    int columns;
    Datum *values;  // row r's keys at [r * columns]
    bool *nulls;
};

// Rows one (sub)transaction deleted from one relation, in `context`.
// Whether that transaction committed is learnt from the transaction
// callbacks (an aborted one's rows live on; a prepared one's fate is not
// awaited), so that the commit log is never asked about an old xid.
struct FoldedRows {
    MemoryContext context;
    Oid relid;
    Oid table;  // the bucket table (relid, or its TOAST table's)
    FullTransactionId xid;
    SubTransactionId subtransaction;  // while not committed
    bool committed;
    Size bytes;
    int count;
    ItemPointerData *rows;
    int indexes;
    IndexKeys *keys;
};

// Noted batches, oldest first, the list in TopMemoryContext. Bounded: past
// the bound the oldest batch is forgotten, and VACUUM gives its space back.
constexpr Size kMaxNotedBytes = 16 * 1024 * 1024;
List *noted = NIL;
Size noted_bytes = 0;
FoldedRows *reclaiming = nullptr;  // forgotten, not yet freed
int noted_since_reclaim = 0;       // batches noted since the last reclaim_relation
bool callbacks_registered = false;

// Takes `folded` off the list, before anything that could fail: a batch
// that failed once is not tried again.
void forget(FoldedRows *folded) {
    noted = list_delete_ptr(noted, folded);
    noted_bytes -= folded->bytes;
}

void forget_and_free(FoldedRows *folded) {
    forget(folded);
    MemoryContextDelete(folded->context);
}

// Applies `f` to the batches not yet committed; `f` returns whether to
// forget the batch. Allocates nothing: it runs in transaction callbacks
// (at commit, an error would be a PANIC; in a subtransaction, memory would
// keep its context alive).
template <typename F>
void for_each_uncommitted(F f) {
    ListCell *cell;
    foreach (cell, noted) {
        auto *folded = static_cast<FoldedRows *>(lfirst(cell));
        if (folded->committed || !f(folded))
            continue;
        noted = foreach_delete_current(noted, cell);
        noted_bytes -= folded->bytes;
        MemoryContextDelete(folded->context);
    }
}

void on_xact(XactEvent event, void *) {
    if (reclaiming != nullptr &&
        (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)) {
        MemoryContextDelete(reclaiming->context);  // its reclaim failed
        reclaiming = nullptr;
    }
    if (noted == NIL)
        return;
    if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
        for_each_uncommitted([](FoldedRows *folded) {
            folded->committed = true;
            return false;
        });
    else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
             event == XACT_EVENT_PREPARE)
        for_each_uncommitted([](FoldedRows *) { return true; });
}

void on_subxact(SubXactEvent event, SubTransactionId subtransaction, SubTransactionId parent,
                void *) {
    if (noted == NIL)
        return;
    if (event == SUBXACT_EVENT_COMMIT_SUB)
        for_each_uncommitted([&](FoldedRows *folded) {
            if (folded->subtransaction == subtransaction)
                folded->subtransaction = parent;
            return false;
        });
    else if (event == SUBXACT_EVENT_ABORT_SUB)
        for_each_uncommitted(
            [&](FoldedRows *folded) { return folded->subtransaction == subtransaction; });
}

// The keys are allocated in `batch`; the work to compute them is not.
IndexKeys keys_of(Relation relation, Relation index, const ItemPointerData *rows, int count,
                  MemoryContext batch) {
    int columns = IndexRelationGetNumberOfKeyAttributes(index);
    IndexKeys keys{RelationGetRelid(index), columns,
                   static_cast<Datum *>(MemoryContextAlloc(batch, sizeof(Datum) * columns * count)),
                   static_cast<bool *>(MemoryContextAlloc(batch, sizeof(bool) * columns * count))};
    IndexInfo *info = BuildIndexInfo(index);
    EState *estate = CreateExecutorState();
    TupleTableSlot *slot = table_slot_create(relation, nullptr);
    GetPerTupleExprContext(estate)->ecxt_scantuple = slot;
    TupleDesc desc = RelationGetDescr(index);
    for (int r = 0; r < count; r++) {
        Datum values[INDEX_MAX_KEYS];
        bool nulls[INDEX_MAX_KEYS];
        ItemPointerData row = rows[r];
        if (!table_tuple_fetch_row_version(relation, &row, SnapshotAny, slot)) {
            // Cannot happen (the row is locked); its keys left null match
            // little, and the scans are bounded.
            for (int c = 0; c < columns; c++) {
                keys.nulls[r * columns + c] = true;
                keys.values[r * columns + c] = Datum(0);
            }
            continue;
        }
        FormIndexDatum(info, slot, estate, values, nulls);
        for (int c = 0; c < columns; c++) {
            Form_pg_attribute attribute = TupleDescAttr(desc, c);
            keys.nulls[r * columns + c] = nulls[c];
            if (nulls[c]) {
                keys.values[r * columns + c] = Datum(0);
                continue;
            }
            // A value stored out of line is read now: its chunks are
            // deleted with the row.
            MemoryContext work = MemoryContextSwitchTo(batch);
            Datum value = values[c];
            if (attribute->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(value)))
                value = PointerGetDatum(
                    detoast_external_attr(reinterpret_cast<varlena *>(DatumGetPointer(value))));
            else
                value = datumCopy(value, attribute->attbyval, attribute->attlen);
            keys.values[r * columns + c] = value;
            MemoryContextSwitchTo(work);
        }
        ResetPerTupleExprContext(estate);
    }
    ExecDropSingleTupleTableSlot(slot);
    FreeExecutorState(estate);
    return keys;
}

// Reads up to `limit` entries of `index` whose first `columns` keys equal
// row `row`'s, so that the scan marks those of dead rows dead.
void visit_entries(Relation relation, Relation index, const IndexKeys &keys, int row, int columns,
                   int limit, Snapshot snapshot, TupleTableSlot *slot) {
    ScanKeyData scan_keys[INDEX_MAX_KEYS];
    for (int c = 0; c < columns; c++) {
        if (keys.nulls[row * keys.columns + c]) {
            ScanKeyEntryInitialize(&scan_keys[c], SK_ISNULL | SK_SEARCHNULL, c + 1, InvalidStrategy,
                                   InvalidOid, InvalidOid, InvalidOid, Datum(0));
            continue;
        }
        Oid type = index->rd_opcintype[c];
        Oid equal = get_opfamily_member(index->rd_opfamily[c], type, type, BTEqualStrategyNumber);
        ScanKeyEntryInitialize(&scan_keys[c], 0, c + 1, BTEqualStrategyNumber, type,
                               index->rd_indcollation[c], get_opcode(equal),
                               keys.values[row * keys.columns + c]);
    }
    IndexScanDesc scan = index_beginscan(relation, index, snapshot, columns, 0);
    index_rescan(scan, scan_keys, columns, nullptr, 0);
    // Bounded: an index whose shared keys do not narrow to the bucket (a
    // user's index on a meta field many series share) is not read whole.
    for (int visited = 0; visited < limit && index_getnext_tid(scan, ForwardScanDirection);
         visited++) {
        while (index_fetch_heap(scan, slot) && scan->xs_heap_continue) {
        }
    }
    index_endscan(scan);
}

// How many leading keys every row has alike (a bucket's tails share their
// meta and start, so one scan of an index on those visits them all).
int shared_columns(Relation index, const IndexKeys &keys, int rows) {
    TupleDesc desc = RelationGetDescr(index);
    for (int c = 0; c < keys.columns; c++) {
        Form_pg_attribute attribute = TupleDescAttr(desc, c);
        for (int r = 1; r < rows; r++) {
            bool null = keys.nulls[r * keys.columns + c];
            if (null != keys.nulls[c] ||
                (!null && !datumIsEqual(keys.values[r * keys.columns + c], keys.values[c],
                                        attribute->attbyval, attribute->attlen)))
                return c;
        }
    }
    return keys.columns;
}

void prune_pages(Relation relation, const FoldedRows &folded) {
    BlockNumber lowest = InvalidBlockNumber, highest = 0, last = InvalidBlockNumber;
    BlockNumber blocks = RelationGetNumberOfBlocks(relation);  // a rewrite may have shrunk it
    for (int r = 0; r < folded.count; r++) {
        BlockNumber block = ItemPointerGetBlockNumber(&folded.rows[r]);
        if (block == last || block >= blocks)
            continue;
        last = block;
        Buffer buffer = ReadBuffer(relation, block);
        // This page has dead rows we know of.
        prune_page(relation, buffer, BLCKSZ);
        LockBuffer(buffer, BUFFER_LOCK_SHARE);
        Size free = PageGetHeapFreeSpace(BufferGetPage(buffer));
        UnlockReleaseBuffer(buffer);
        RecordPageWithFreeSpace(relation, block, free);
        lowest = lowest == InvalidBlockNumber ? block : Min(lowest, block);
        highest = Max(highest, block);
    }
    if (lowest != InvalidBlockNumber)
        FreeSpaceMapVacuumRange(relation, lowest, highest + 1);
}

void reclaim(Relation relation, const FoldedRows &folded) {
    TupleTableSlot *slot = table_slot_create(relation, nullptr);
    // Not an MVCC snapshot: it sees what is not yet dead to everyone, and
    // takes no predicate locks (SERIALIZABLE) on ranges the writer never read.
    SnapshotData snapshot;
    InitNonVacuumableSnapshot(snapshot, GlobalVisTestFor(relation));
    List *indexes = RelationGetIndexList(relation);
    for (int i = 0; i < folded.indexes; i++) {
        const IndexKeys &keys = folded.keys[i];
        if (!list_member_oid(indexes, keys.index))
            continue;  // dropped since
        Relation index = index_open(keys.index, RowExclusiveLock);
        if (index->rd_index->indisvalid) {  // not one being built
            int shared = shared_columns(index, keys, folded.count);
            if (shared > 0)
                visit_entries(relation, index, keys, 0, shared, 4 * folded.count + 80, &snapshot,
                              slot);
            else
                for (int r = 0; r < folded.count; r++)
                    visit_entries(relation, index, keys, r, keys.columns, 4, &snapshot, slot);
        }
        index_close(index, NoLock);
    }
    ExecDropSingleTupleTableSlot(slot);
    prune_pages(relation, folded);
}

void note_batch(Relation relation, Oid table, const ItemPointerData *rows, int count) {
    if (count == 0)
        return;
    if (!callbacks_registered) {
        RegisterXactCallback(on_xact, nullptr);
        RegisterSubXactCallback(on_subxact, nullptr);
        callbacks_registered = true;
    }
    while (noted != NIL && noted_bytes > kMaxNotedBytes)
        forget_and_free(static_cast<FoldedRows *>(linitial(noted)));
    // Under the statement's context until it is complete: an error on the
    // way leaves nothing behind.
    MemoryContext context =
        AllocSetContextCreate(CurrentMemoryContext, "tscoll folded rows", ALLOCSET_SMALL_SIZES);
    MemoryContext old = MemoryContextSwitchTo(context);
    auto *folded = static_cast<FoldedRows *>(palloc0(sizeof(FoldedRows)));
    MemoryContextSwitchTo(old);
    folded->context = context;
    folded->relid = RelationGetRelid(relation);
    folded->table = table;
    folded->xid = GetCurrentFullTransactionId();
    folded->subtransaction = GetCurrentSubTransactionId();
    folded->count = count;
    folded->rows = static_cast<ItemPointerData *>(
        MemoryContextAlloc(context, sizeof(ItemPointerData) * count));
    memcpy(folded->rows, rows, sizeof(ItemPointerData) * count);
    List *indexes = RelationGetIndexList(relation);
    folded->keys = static_cast<IndexKeys *>(
        MemoryContextAlloc(context, sizeof(IndexKeys) * list_length(indexes)));
    ListCell *cell;
    // Not a partial index: its expressions need not hold for rows outside
    // its predicate, and an error here would fail the fold.
    foreach (cell, indexes) {
        Relation index = index_open(lfirst_oid(cell), RowExclusiveLock);
        if (index->rd_rel->relam == BTREE_AM_OID && index->rd_index->indisvalid &&
            RelationGetIndexPredicate(index) == NIL)
            folded->keys[folded->indexes++] = keys_of(relation, index, rows, count, context);
        index_close(index, NoLock);
    }
    folded->bytes = MemoryContextMemAllocated(context, true);
    MemoryContextSetParent(context, TopMemoryContext);
    MemoryContextSwitchTo(TopMemoryContext);
    noted = lappend(noted, folded);
    noted_bytes += folded->bytes;
    noted_since_reclaim++;
    MemoryContextSwitchTo(old);
}

// The chunks of the values of `rows` stored out of line: deleted with them.
List *toast_chunks_of(Relation relation, const ItemPointerData *rows, int count, Oid *toast_relid) {
    List *chunks = NIL;
    TupleTableSlot *slot = table_slot_create(relation, nullptr);
    TupleDesc desc = RelationGetDescr(relation);
    for (int r = 0; r < count; r++) {
        ItemPointerData row = rows[r];
        if (!table_tuple_fetch_row_version(relation, &row, SnapshotAny, slot))
            continue;
        slot_getallattrs(slot);
        for (int a = 0; a < desc->natts; a++) {
            if (slot->tts_isnull[a] || TupleDescAttr(desc, a)->attlen != -1 ||
                !VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(slot->tts_values[a])))
                continue;
            varatt_external pointer;
            VARATT_EXTERNAL_GET_POINTER(pointer, DatumGetPointer(slot->tts_values[a]));
            *toast_relid = pointer.va_toastrelid;
            Relation toast = table_open(pointer.va_toastrelid, RowExclusiveLock);
            Relation index = index_open(
                toast_get_valid_index(pointer.va_toastrelid, RowExclusiveLock), RowExclusiveLock);
            ScanKeyData key;
            ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ,
                        ObjectIdGetDatum(pointer.va_valueid));
            SysScanDesc scan = systable_beginscan_ordered(toast, index, SnapshotAny, 1, &key);
            HeapTuple chunk;
            while ((chunk = systable_getnext_ordered(scan, ForwardScanDirection)) != nullptr) {
                auto *tid = static_cast<ItemPointerData *>(palloc(sizeof(ItemPointerData)));
                *tid = chunk->t_self;
                chunks = lappend(chunks, tid);
            }
            systable_endscan_ordered(scan);
            index_close(index, NoLock);
            table_close(toast, NoLock);
        }
    }
    ExecDropSingleTupleTableSlot(slot);
    return chunks;
}

// At most this many batches a call beyond twice those noted since the
// last, so that a write after a long snapshot ended does not pay for
// everything it held back at once, while writes that each fold many
// buckets (a statement over a thousand series folds or rewrites a bucket
// of nearly each) keep up with what they note.
constexpr int kBatchesPerCall = 32;

void reclaim_rows_of(Relation relation, int budget) {
    Oid relid = RelationGetRelid(relation);
    List *batches = list_copy(noted);
    ListCell *cell;
    int reclaimed = 0;
    foreach (cell, batches) {
        auto *folded = static_cast<FoldedRows *>(lfirst(cell));
        if (folded->relid != relid || !folded->committed)
            continue;  // another relation's, or the current transaction's
        // Batches were noted in commit order: once one is still visible to
        // some snapshot, so are the later ones (and asking again for each
        // would recompute the horizon each time).
        if (reclaimed++ == budget || !GlobalVisCheckRemovableFullXid(relation, folded->xid))
            break;
        forget(folded);
        reclaiming = folded;
        reclaim(relation, *folded);
        reclaiming = nullptr;
        MemoryContextDelete(folded->context);
    }
    list_free(batches);
}

void reclaim_relation(Oid relid) {
    int budget = kBatchesPerCall + 2 * noted_since_reclaim;
    noted_since_reclaim = 0;
    Relation relation = table_open(relid, RowExclusiveLock);
    Oid toast_relid = relation->rd_rel->reltoastrelid;
    reclaim_rows_of(relation, budget);
    table_close(relation, NoLock);
    if (OidIsValid(toast_relid)) {
        Relation toast = table_open(toast_relid, RowExclusiveLock);
        reclaim_rows_of(toast, budget);
        table_close(toast, NoLock);
    }
}

}  // namespace

void prune_page(Relation relation, Buffer buffer, Size needed) {
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    Page page = BufferGetPage(buffer);
    TransactionId prune_xid = reinterpret_cast<PageHeader>(page)->pd_prune_xid;
    bool short_of_room = PageGetHeapFreeSpace(page) < needed && TransactionIdIsValid(prune_xid) &&
                         GlobalVisTestIsRemovableXid(GlobalVisTestFor(relation), prune_xid);
    LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
    if (short_of_room) {
        // heap_page_prune_opt prunes only a page that looks full, or whose
        // free space is under a tenth of it (it has no other reason to
        // believe a page is worth it): the hint says the page is full.
        LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
        PageSetFull(BufferGetPage(buffer));
        MarkBufferDirtyHint(buffer, true);
        LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
    }
    heap_page_prune_opt(relation, buffer);
}

void note_folded_rows(Relation relation, const ItemPointerData *rows, int count) {
    Oid toast_relid = InvalidOid;
    List *chunks = toast_chunks_of(relation, rows, count, &toast_relid);
    note_batch(relation, RelationGetRelid(relation), rows, count);
    if (chunks == NIL)
        return;
    int n = list_length(chunks);
    auto *tids = static_cast<ItemPointerData *>(palloc(sizeof(ItemPointerData) * n));
    for (int i = 0; i < n; i++)
        tids[i] = *static_cast<ItemPointerData *>(list_nth(chunks, i));
    Relation toast = table_open(toast_relid, RowExclusiveLock);
    note_batch(toast, RelationGetRelid(relation), tids, n);
    table_close(toast, NoLock);
}

// A batch is forgotten before it is reclaimed: should reclaiming fail
// (an error is a bug, or a cancel), the statement fails but the next one
// does not try it again, and VACUUM gives its space back.
void reclaim_folded_rows(Oid relid) {
    bool ready = false;
    ListCell *cell;
    foreach (cell, noted) {
        auto *folded = static_cast<FoldedRows *>(lfirst(cell));
        ready = ready || (folded->table == relid && folded->committed);
    }
    if (ready)
        reclaim_relation(relid);
}

}  // namespace tscoll::pg
