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
struct FoldedRows {
    MemoryContext context;
    Oid relid;
    TransactionId xid;
    int count;
    ItemPointerData *rows;
    int indexes;
    IndexKeys *keys;
};

// Noted batches, oldest first, the list in TopMemoryContext. Bounded: past
// the bound the oldest batch is forgotten, and VACUUM gives its space back.
constexpr int kMaxNotedRows = 100000;
List *noted = NIL;
int noted_rows = 0;

// Takes `folded` off the list, before anything that could fail: a batch
// that failed once is not tried again.
void forget(FoldedRows *folded) {
    noted = list_delete_ptr(noted, folded);
    noted_rows -= folded->count;
}

IndexKeys keys_of(Relation relation, Relation index, const ItemPointerData *rows, int count) {
    IndexInfo *info = BuildIndexInfo(index);
    int columns = info->ii_NumIndexKeyAttrs;
    IndexKeys keys{RelationGetRelid(index), columns,
                   static_cast<Datum *>(palloc(sizeof(Datum) * columns * count)),
                   static_cast<bool *>(palloc(sizeof(bool) * columns * count))};
    EState *estate = CreateExecutorState();
    TupleTableSlot *slot = table_slot_create(relation, nullptr);
    GetPerTupleExprContext(estate)->ecxt_scantuple = slot;
    TupleDesc desc = RelationGetDescr(index);
    for (int r = 0; r < count; r++) {
        Datum values[INDEX_MAX_KEYS];
        bool nulls[INDEX_MAX_KEYS];
        ItemPointerData row = rows[r];
        if (!table_tuple_fetch_row_version(relation, &row, SnapshotAny, slot))
            elog(ERROR, "a folded tail vanished while locked");
        FormIndexDatum(info, slot, estate, values, nulls);
        for (int c = 0; c < columns; c++) {
            Form_pg_attribute attribute = TupleDescAttr(desc, c);
            keys.nulls[r * columns + c] = nulls[c];
            keys.values[r * columns + c] =
                nulls[c] ? Datum(0) : datumCopy(values[c], attribute->attbyval, attribute->attlen);
        }
        ResetPerTupleExprContext(estate);
    }
    ExecDropSingleTupleTableSlot(slot);
    FreeExecutorState(estate);
    return keys;
}

// Reads the entries of `index` whose first `columns` keys equal row
// `row`'s, so that the scan marks those of dead rows dead.
void visit_entries(Relation relation, Relation index, const IndexKeys &keys, int row, int columns,
                   Snapshot snapshot, TupleTableSlot *slot) {
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
    while (index_getnext_slot(scan, ForwardScanDirection, slot)) {
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
        // heap_page_prune_opt prunes only a page that looks full (it has
        // no other reason to believe a page is worth it); this one has
        // dead rows we know of, which is what the hint means.
        LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
        PageSetFull(BufferGetPage(buffer));
        MarkBufferDirtyHint(buffer, true);
        LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
        heap_page_prune_opt(relation, buffer);
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
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    List *indexes = RelationGetIndexList(relation);
    for (int i = 0; i < folded.indexes; i++) {
        if (!list_member_oid(indexes, folded.keys[i].index))
            continue;  // dropped since
        Relation index = index_open(folded.keys[i].index, RowExclusiveLock);
        int shared = shared_columns(index, folded.keys[i], folded.count);
        if (shared > 0)
            visit_entries(relation, index, folded.keys[i], 0, shared, snapshot, slot);
        else
            for (int r = 0; r < folded.count; r++)
                visit_entries(relation, index, folded.keys[i], r, folded.keys[i].columns, snapshot,
                              slot);
        index_close(index, NoLock);
    }
    UnregisterSnapshot(snapshot);
    ExecDropSingleTupleTableSlot(slot);
    prune_pages(relation, folded);
}

enum class Fate { kWait, kForget, kReclaim };

Fate fate_of(Relation relation, TransactionId xid) {
    if (TransactionIdIsCurrentTransactionId(xid) || TransactionIdIsInProgress(xid))
        return Fate::kWait;
    if (!TransactionIdDidCommit(xid))
        return Fate::kForget;  // the rows live on
    return GlobalVisCheckRemovableXid(relation, xid) ? Fate::kReclaim : Fate::kWait;
}

void note_batch(Relation relation, const ItemPointerData *rows, int count) {
    if (count == 0)
        return;
    while (noted != NIL && noted_rows + count > kMaxNotedRows) {
        auto *oldest = static_cast<FoldedRows *>(linitial(noted));
        forget(oldest);
        MemoryContextDelete(oldest->context);
    }
    MemoryContext context =
        AllocSetContextCreate(TopMemoryContext, "tscoll folded rows", ALLOCSET_SMALL_SIZES);
    MemoryContext old = MemoryContextSwitchTo(context);
    auto *folded = static_cast<FoldedRows *>(palloc0(sizeof(FoldedRows)));
    folded->context = context;
    folded->relid = RelationGetRelid(relation);
    folded->xid = GetCurrentTransactionId();
    folded->count = count;
    folded->rows = static_cast<ItemPointerData *>(palloc(sizeof(ItemPointerData) * count));
    memcpy(folded->rows, rows, sizeof(ItemPointerData) * count);
    List *indexes = RelationGetIndexList(relation);
    folded->keys = static_cast<IndexKeys *>(palloc(sizeof(IndexKeys) * list_length(indexes)));
    ListCell *cell;
    foreach (cell, indexes) {
        Relation index = index_open(lfirst_oid(cell), RowExclusiveLock);
        if (index->rd_rel->relam == BTREE_AM_OID && RelationGetIndexPredicate(index) == NIL)
            folded->keys[folded->indexes++] = keys_of(relation, index, rows, count);
        index_close(index, NoLock);
    }
    MemoryContextSwitchTo(TopMemoryContext);
    noted = lappend(noted, folded);
    noted_rows += count;
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

void reclaim_rows_of(Relation relation) {
    Oid relid = RelationGetRelid(relation);
    List *batches = list_copy(noted);
    ListCell *cell;
    foreach (cell, batches) {
        auto *folded = static_cast<FoldedRows *>(lfirst(cell));
        if (folded->relid != relid)
            continue;
        Fate fate = fate_of(relation, folded->xid);
        if (fate == Fate::kWait)
            continue;
        forget(folded);
        if (fate == Fate::kReclaim)
            reclaim(relation, *folded);
        MemoryContextDelete(folded->context);
    }
    list_free(batches);
}

}  // namespace

void note_folded_rows(Relation relation, const ItemPointerData *rows, int count) {
    Oid toast_relid = InvalidOid;
    List *chunks = toast_chunks_of(relation, rows, count, &toast_relid);
    note_batch(relation, rows, count);
    if (chunks == NIL)
        return;
    int n = list_length(chunks);
    auto *tids = static_cast<ItemPointerData *>(palloc(sizeof(ItemPointerData) * n));
    for (int i = 0; i < n; i++)
        tids[i] = *static_cast<ItemPointerData *>(list_nth(chunks, i));
    Relation toast = table_open(toast_relid, RowExclusiveLock);
    note_batch(toast, tids, n);
    table_close(toast, NoLock);
}

void reclaim_folded_rows(Oid relid) {
    if (noted == NIL)
        return;
    Relation relation = table_open(relid, RowExclusiveLock);
    Oid toast_relid = relation->rd_rel->reltoastrelid;
    reclaim_rows_of(relation);
    table_close(relation, NoLock);
    if (OidIsValid(toast_relid)) {
        Relation toast = table_open(toast_relid, RowExclusiveLock);
        reclaim_rows_of(toast);
        table_close(toast, NoLock);
    }
}

}  // namespace tscoll::pg
