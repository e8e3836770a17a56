#include "pg/write/bucket_rows.hpp"

extern "C" {
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/readfuncs.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

#include <cstdio>

#include "pg/catalog/collection.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/storage/reclaim.hpp"

namespace tscoll::pg {

bool inserts_directly(Relation rel) {
    if (rel->trigdesc != nullptr || rel->rd_rel->relhasrules || rel->rd_rel->relrowsecurity ||
        rel->rd_rel->relkind != RELKIND_RELATION)
        return false;
    TupleDesc desc = RelationGetDescr(rel);
    const char *leading[] = {"_id", "meta", "control", "data"};
    for (int c = 0; c < desc->natts; c++) {
        Form_pg_attribute column = TupleDescAttr(desc, c);
        bool expected =
            c < 4 ? !column->attisdropped && strcmp(NameStr(column->attname), leading[c]) == 0
                  : column->attisdropped || column->attgenerated != '\0';
        if (!expected)
            return false;
    }
    return desc->natts >= 4;
}

// A row version as the queries spell it, `ctid::text || xmin`.
static char *row_version(ItemPointer tid, TransactionId xmin) {
    return psprintf("(%u,%u)%u", ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
                    xmin);
}

// Whether a bucket row (in `slot`) is of the series `meta` (nullptr: no
// meta), as `meta = $2` or `meta IS NULL` would tell.
static bool of_series(TupleTableSlot *slot, Jsonb *meta) {
    bool isnull = false;
    Datum stored = slot_getattr(slot, 2, &isnull);
    if (meta == nullptr || isnull)
        return meta == nullptr && isnull;
    return DatumGetBool(DirectFunctionCall2(jsonb_eq, stored, PointerGetDatum(meta)));
}

// `key` as `<index column k> = value`, with the index's own equality.
static void equality_key(ScanKey key, Relation index, int k, Datum value) {
    Oid type = index->rd_opcintype[k];
    Oid equal = get_opfamily_member(index->rd_opfamily[k], type, type, BTEqualStrategyNumber);
    ScanKeyEntryInitialize(key, 0, k + 1, BTEqualStrategyNumber, type, index->rd_indcollation[k],
                           get_opcode(equal), value);
}

// Locks the row in `slot` as the executor locks a row for FOR UPDATE SKIP
// LOCKED: under READ COMMITTED, the latest version of one updated since
// the snapshot, which `slot` then holds (`*traversed`, to be tested
// again). Whether it was locked.
static bool lock_skip_locked(Relation rel, TupleTableSlot *slot, Snapshot snapshot,
                             bool *traversed) {
    int flags = IsolationUsesXactSnapshot() ? 0 : TUPLE_LOCK_FLAG_FIND_LAST_VERSION;
    TM_FailureData failure;
    TM_Result result =
        table_tuple_lock(rel, &slot->tts_tid, snapshot, slot, GetCurrentCommandId(true),
                         LockTupleExclusive, LockWaitSkip, flags, &failure);
    *traversed = failure.traversed;
    return result == TM_Ok;
}

// The row of bucket `id` of series `meta`, locked as `SELECT ... WHERE _id
// = $1 AND <meta test> FOR UPDATE SKIP LOCKED` under the latest snapshot
// locks it, through the primary key without planning and running that
// query: on single-row appends, the query's executor start and end were
// a third of loading the bucket. Returns whether a row was locked, and
// sets `*row` from it (its values copied). `*direct` is false (and
// nothing is read) when the table needs the query (inserts_directly).
bool lock_row_directly(Oid bucket_table, Datum id, Jsonb *meta, bool *direct, DirectRow *row) {
    Relation rel = table_open(bucket_table, RowShareLock);
    Oid primary_key = inserts_directly(rel) ? RelationGetPrimaryKeyIndex(rel) : InvalidOid;
    *direct = OidIsValid(primary_key);
    if (!*direct) {
        table_close(rel, NoLock);
        return false;
    }
    Relation index = index_open(primary_key, AccessShareLock);
    ScanKeyData key;
    equality_key(&key, index, 0, id);
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    IndexScanDesc scan = index_beginscan(rel, index, snapshot, 1, 0);
    index_rescan(scan, &key, 1, nullptr, 0);
    HeapTuple locked = nullptr;
    bool traversed = false;
    while (locked == nullptr && index_getnext_slot(scan, ForwardScanDirection, slot)) {
        if (of_series(slot, meta) && lock_skip_locked(rel, slot, snapshot, &traversed) &&
            (!traversed || of_series(slot, meta)))
            locked = ExecCopySlotHeapTuple(slot);
    }
    if (locked != nullptr) {
        TupleDesc desc = RelationGetDescr(rel);
        bool isnull = false;
        Jsonb *control = DatumGetJsonbP(heap_getattr(locked, 3, desc, &isnull));
        JsonbValue *closed = getKeyJsonValueFromContainer(&control->root, "closed", 6, nullptr);
        row->closed = closed != nullptr && closed->type == jbvBool && closed->val.boolean;
        row->data = heap_getattr(locked, 4, desc, &isnull);
        row->min_time =
            DatumGetTimestampTz(heap_getattr(locked, SPI_fnumber(desc, "min_time"), desc, &isnull));
        row->version = row_version(&locked->t_self, HeapTupleHeaderGetRawXmin(locked->t_data));
    }
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    UnregisterSnapshot(snapshot);
    index_close(index, AccessShareLock);
    table_close(rel, NoLock);
    // As SPI does after a statement: later queries see the lock.
    CommandCounterIncrement();
    return locked != nullptr;
}

// The expressions (pg_attrdef texts) of the stored generated columns of
// `bucket_table`, at most `max`; returns how many, or -1 for more.
int generated_expressions(Oid bucket_table, AttrNumber *columns, char **expressions, int max) {
    Relation rel = table_open(bucket_table, AccessShareLock);
    TupleDesc desc = RelationGetDescr(rel);
    TupleConstr *constr = desc->constr;
    int n = 0;
    for (int c = 0; c < desc->natts && n >= 0; c++) {
        if (TupleDescAttr(desc, c)->attgenerated != ATTRIBUTE_GENERATED_STORED)
            continue;
        if (n == max) {
            n = -1;
            break;
        }
        columns[n] = static_cast<AttrNumber>(c + 1);
        expressions[n] = nullptr;
        for (int d = 0; constr != nullptr && d < constr->num_defval; d++)
            if (constr->defval[d].adnum == c + 1)
                expressions[n] = pstrdup(constr->defval[d].adbin);
        n = expressions[n] == nullptr ? -1 : n + 1;
    }
    table_close(rel, AccessShareLock);
    return n;
}

// Whether `expression` (a pg_attrdef text) is tscoll._control_time(control,
// <bound>, <field>) with constants, as the bucket table defines min_time
// and max_time; sets `*bound` and `*field`.
bool parse_control_time(const char *expression, char **bound, char **field) {
    Node *node = static_cast<Node *>(stringToNode(expression));
    if (!IsA(node, FuncExpr) || list_length(reinterpret_cast<FuncExpr *>(node)->args) != 3)
        return false;
    FuncExpr *call = reinterpret_cast<FuncExpr *>(node);
    Node *control = static_cast<Node *>(linitial(call->args));
    Node *arguments[] = {static_cast<Node *>(lsecond(call->args)),
                         static_cast<Node *>(lthird(call->args))};
    char *name = get_func_name(call->funcid);
    if (name == nullptr || strcmp(name, "_control_time") != 0 ||
        get_func_namespace(call->funcid) != get_namespace_oid("tscoll", true) ||
        !IsA(control, Var) || reinterpret_cast<Var *>(control)->varattno != 3)
        return false;
    for (Node *argument : arguments) {
        Const *constant = reinterpret_cast<Const *>(argument);
        if (!IsA(argument, Const) || constant->constisnull || constant->consttype != TEXTOID)
            return false;
    }
    *bound = TextDatumGetCString(reinterpret_cast<Const *>(arguments[0])->constvalue);
    *field = TextDatumGetCString(reinterpret_cast<Const *>(arguments[1])->constvalue);
    return true;
}

// Sets the generated columns of the row in `slot` from its control.
static void compute_times(TupleTableSlot *slot, const GeneratedTimes &times) {
    Jsonb *control = DatumGetJsonbP(slot->tts_values[2]);
    for (int i = 0; i < times.count; i++) {
        slot->tts_values[times.column[i] - 1] =
            TimestampTzGetDatum(control_time(control, times.bound[i], times.field[i]));
        slot->tts_isnull[times.column[i] - 1] = false;
    }
}

// A tail that appends will be written into lands on a page at most this
// full, whatever the table's fillfactor: it is written again as they
// come, a little larger each time, and its new version stays heap-only
// only while its page has room for it (BucketStore::append_in_place). At
// the table's fillfactor, a page of eight single TSBS readings' tails has
// no room left by the time each holds a few.
constexpr int kTailFillFactor = 80;

// Runs `insert` with `rel`'s fill target at `fillfactor` (heap's
// RelationGetBufferForTuple reads it from the relation's options).
template <typename Insert>
static void with_fillfactor(Relation rel, int fillfactor, Insert insert) {
    auto *options = reinterpret_cast<StdRdOptions *>(rel->rd_options);
    if (options == nullptr || options->fillfactor <= fillfactor) {
        insert();
        return;
    }
    int saved = options->fillfactor;
    options->fillfactor = fillfactor;
    PG_TRY();
    { insert(); }
    PG_FINALLY();
    {
        // Through rd_options again: a relcache rebuild meanwhile would have
        // parsed them anew (the same: an ALTER TABLE waits for our lock).
        if (rel->rd_options != nullptr)
            reinterpret_cast<StdRdOptions *>(rel->rd_options)->fillfactor = saved;
    }
    PG_END_TRY();
}

// Inserts the row in `slot` as ExecSimpleRelationInsert does, its
// generated columns computed from `times` when known.
static void insert_slot(ResultRelInfo *target, EState *estate, TupleTableSlot *slot,
                        const GeneratedTimes &times) {
    Relation rel = target->ri_RelationDesc;
    if (times.count < 0 || rel->rd_rel->relispartition) {
        ExecSimpleRelationInsert(target, estate, slot);
        return;
    }
    compute_times(slot, times);
    if (rel->rd_att->constr != nullptr)
        ExecConstraints(target, slot, estate);
    simple_table_tuple_insert(rel, slot);
    if (target->ri_NumIndices > 0)
        list_free(ExecInsertIndexTuples(target, slot, estate, false, false, nullptr, NIL));
}

// Whether the version in `slot` (virtual) of the row at `tid` fits on that
// row's page, where it can be heap-only.
static bool fits_on_its_page(Relation rel, ItemPointer tid, TupleTableSlot *slot) {
    TupleDesc desc = slot->tts_tupleDescriptor;
    bool has_nulls = false;
    for (int c = 0; c < desc->natts; c++)
        has_nulls = has_nulls || slot->tts_isnull[c];
    Size header = offsetof(HeapTupleHeaderData, t_bits) + (has_nulls ? BITMAPLEN(desc->natts) : 0);
    Size length = MAXALIGN(MAXALIGN(header) +
                           heap_compute_data_size(desc, slot->tts_values, slot->tts_isnull));
    Buffer buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    bool fits = PageGetHeapFreeSpace(BufferGetPage(buffer)) >= length;
    UnlockReleaseBuffer(buffer);
    return fits;
}

// Writes the row `old` again as `slot`, as ExecSimpleRelationUpdate does,
// its generated columns computed from `times` when known. Without `wait`,
// a row that another transaction is changing or has locked is left as it
// is; returns whether it was written, and sets `*hot` when the new version
// is heap-only (no index entries of its own).
static bool update_slot(ResultRelInfo *target, EState *estate, TupleTableSlot *old,
                        TupleTableSlot *slot, const GeneratedTimes &times, bool wait, bool *hot) {
    Relation rel = target->ri_RelationDesc;
    *hot = false;
    if (times.count < 0 || rel->rd_rel->relispartition) {
        if (!wait)
            return false;
        ExecOpenIndices(target, false);
        ExecSimpleRelationUpdate(target, estate, nullptr, old, slot);
        return true;
    }
    compute_times(slot, times);
    CheckCmdReplicaIdentity(rel, CMD_UPDATE);
    if (rel->rd_att->constr != nullptr)
        ExecConstraints(target, slot, estate);
    bool update_indexes = false;
    if (wait) {
        simple_table_tuple_update(rel, &old->tts_tid, slot, estate->es_snapshot, &update_indexes);
    } else {
        // Written elsewhere, the new version would cost new index entries
        // and leave the old one to be reclaimed: as much as a new row.
        if (!fits_on_its_page(rel, &old->tts_tid, slot))
            return false;
        TM_FailureData failure;
        LockTupleMode mode;
        if (table_tuple_update(rel, &old->tts_tid, slot, estate->es_output_cid, estate->es_snapshot,
                               InvalidSnapshot, false, &failure, &mode, &update_indexes) != TM_Ok)
            return false;
    }
    // The indexes are opened only for a version that needs entries: a
    // heap-only one (most appends written in place) needs none, and
    // opening them builds each one's IndexInfo, its expressions copied.
    if (update_indexes) {
        ExecOpenIndices(target, false);
        if (target->ri_NumIndices > 0)
            list_free(ExecInsertIndexTuples(target, slot, estate, true, false, nullptr, NIL));
    }
    *hot = !update_indexes;
    return true;
}

// An executor state for writing rows of `rel` as logical replication
// does, `generated` its extraUpdatedCols.
static EState *writer_state(Relation rel, Bitmapset *generated) {
    EState *estate = CreateExecutorState();
    RangeTblEntry *rte = makeNode(RangeTblEntry);
    rte->rtekind = RTE_RELATION;
    rte->relid = RelationGetRelid(rel);
    rte->relkind = rel->rd_rel->relkind;
    rte->rellockmode = RowExclusiveLock;
    rte->extraUpdatedCols = generated;
    ExecInitRangeTable(estate, list_make1(rte));
    estate->es_output_cid = GetCurrentCommandId(true);
    return estate;
}

// The new rows of a bucket table, inserted as logical replication applies
// an insert (constraints, the generated min_time and max_time, TOAST,
// indexes), without planning and running an INSERT: on single-row
// appends, the statement's executor start and its unnest were a sixth of
// writing a tail. Rows marked in `growing` (tails that appends will be
// written into) land on pages with room for them to grow
// (kTailFillFactor). Returns the rows' versions (ctid, xmin) as
// `ctid::text || xmin` prints them, in order, or nullptr when the table
// needs the executor (inserts_directly). The caller is the table's owner
// (OwnerSession) and has checked INSERT on the view.
char **insert_rows_directly(Oid bucket_table, const GeneratedTimes *times, int n, const Datum *ids,
                            const Datum *metas, const bool *meta_nulls, const Datum *controls,
                            const Datum *data, const bool *growing) {
    Relation rel = table_open(bucket_table, RowExclusiveLock);
    if (!inserts_directly(rel)) {
        table_close(rel, NoLock);
        return nullptr;
    }
    EState *estate = writer_state(rel, nullptr);
    ResultRelInfo *target = makeNode(ResultRelInfo);
    InitResultRelInfo(target, rel, 1, nullptr, 0);
    ExecOpenIndices(target, false);
    TupleTableSlot *slot = table_slot_create(rel, &estate->es_tupleTable);
    TupleDesc desc = RelationGetDescr(rel);
    char **versions = static_cast<char **>(palloc(sizeof(char *) * n));
    TransactionId xid = GetCurrentTransactionId();
    for (int i = 0; i < n; i++) {
        ExecClearTuple(slot);
        for (int c = 0; c < desc->natts; c++) {
            slot->tts_values[c] = 0;
            slot->tts_isnull[c] = true;
        }
        // _id, meta, control, data: the bucket table's first columns.
        slot->tts_values[0] = ids[i];
        slot->tts_isnull[0] = false;
        slot->tts_values[1] = metas[i];
        slot->tts_isnull[1] = meta_nulls[i];
        slot->tts_values[2] = controls[i];
        slot->tts_isnull[2] = false;
        slot->tts_values[3] = data[i];
        slot->tts_isnull[3] = false;
        ExecStoreVirtualTuple(slot);
        if (growing[i])
            with_fillfactor(rel, kTailFillFactor,
                            [&] { insert_slot(target, estate, slot, *times); });
        else
            insert_slot(target, estate, slot, *times);
        versions[i] = row_version(&slot->tts_tid, xid);
        ResetPerTupleExprContext(estate);
    }
    ExecCloseIndices(target);
    ExecResetTupleTable(estate->es_tupleTable, false);
    FreeExecutorState(estate);
    table_close(rel, NoLock);
    // As SPI does before its next statement: the flush's later queries
    // (and a COPY's next flush) see these rows.
    CommandCounterIncrement();
    return versions;
}

// An index whose leading keys are the bucket table's (meta, min_time) or
// min_time, valid and not partial: 1 or 2 keys lead (meta, min_time) or
// min_time; 0 for none.
static int leading_start_keys(Relation index, AttrNumber meta, AttrNumber min_time) {
    Form_pg_index form = index->rd_index;
    if (!form->indisvalid || index->rd_rel->relam != BTREE_AM_OID ||
        !heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, nullptr))
        return 0;
    if (form->indnkeyatts >= 2 && form->indkey.values[0] == meta &&
        form->indkey.values[1] == min_time)
        return 2;
    return form->indnkeyatts >= 1 && form->indkey.values[0] == min_time ? 1 : 0;
}

// A number of a tail's control.tail, as an int8 (false when absent).
static bool tail_number(JsonbContainer *tail, const char *key, int64 *number) {
    JsonbValue value;
    if (getKeyJsonValueFromContainer(tail, key, strlen(key), &value) == nullptr ||
        value.type != jbvNumeric)
        return false;
    *number = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(value.val.numeric)));
    return true;
}

// Whether a row's control names it a tail of `bucket` (hex) at seq
// `from_seq` or later; sets `*seq` and `*first` (its first append's seq).
static bool tail_of(Jsonb *control, const char *bucket, int64 from_seq, int64 *seq, int64 *first) {
    JsonbValue tail;
    if (getKeyJsonValueFromContainer(&control->root, "tail", 4, &tail) == nullptr ||
        tail.type != jbvBinary)
        return false;
    JsonbValue name;
    if (getKeyJsonValueFromContainer(tail.val.binary.data, "bucket", 6, &name) == nullptr ||
        name.type != jbvString || name.val.string.len != static_cast<int>(strlen(bucket)) ||
        memcmp(name.val.string.val, bucket, name.val.string.len) != 0 ||
        !tail_number(tail.val.binary.data, "seq", seq))
        return false;
    if (!tail_number(tail.val.binary.data, "first", first))
        *first = *seq;
    return *seq >= from_seq;
}

// Whether the row in `slot` is a tail of `bucket` (hex) at `from_seq` or
// later, and of series `meta` when `test_meta` (found through an index
// that does not lead with meta, or a later version of the row); sets
// `*seq` and `*first`.
static bool tail_row_of(TupleTableSlot *slot, bool test_meta, Jsonb *meta, const char *bucket,
                        int64 from_seq, int64 *seq, int64 *first) {
    bool isnull = false;
    Datum control = slot_getattr(slot, 3, &isnull);
    return !isnull && (!test_meta || of_series(slot, meta)) &&
           tail_of(DatumGetJsonbP(control), bucket, from_seq, seq, first);
}

// control.count, as (control->>'count')::int8 reads it (0 if absent).
static int64 control_count(Jsonb *control) {
    JsonbValue count;
    if (getKeyJsonValueFromContainer(&control->root, "count", 5, &count) == nullptr ||
        count.type != jbvNumeric)
        return 0;
    return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(count.val.numeric)));
}

// The tail in `slot` (of seq `seq`, first append `first`) as a DirectTail,
// in the caller's memory context, its data read when `data`.
static void read_tail(TupleTableSlot *slot, int64 seq, int64 first, const char *time_field,
                      bool data, DirectTail *tail) {
    bool isnull = false, free_tuple = false;
    HeapTuple tuple = ExecFetchSlotHeapTuple(slot, false, &free_tuple);
    tail->seq = seq;
    tail->first = first;
    Jsonb *control = DatumGetJsonbP(slot_getattr(slot, 3, &isnull));
    tail->count = control_count(control);
    tail->latest = control_time(control, "latest", time_field);
    tail->bound = control_time(control, "max", time_field);
    tail->id = datumCopy(slot_getattr(slot, 1, &isnull), false,
                         TupleDescAttr(slot->tts_tupleDescriptor, 0)->attlen);
    tail->data = data ? PointerGetDatum(PG_DETOAST_DATUM_COPY(slot_getattr(slot, 4, &isnull))) : 0;
    tail->version = row_version(&slot->tts_tid, HeapTupleHeaderGetRawXmin(tuple->t_data));
    if (free_tuple)
        heap_freetuple(tuple);
}

// The tails of `bucket` (hex) of series `meta` starting at `min_time`,
// from `from_seq` on, under the latest snapshot, as run_tails' query reads
// them (locked as FOR UPDATE SKIP LOCKED locks a row, when `reading`
// says so), through an index leading with (meta, min_time) or min_time,
// without planning and running that query (on the 8-client single-row
// load, reading tails went from 3.5% of the backends' samples to 2.4%).
// Returns how many, in no order, or -1 when the table needs the query
// (inserts_directly, or no such index).
int read_tails_directly(Oid bucket_table, Jsonb *meta, TimestampTz min_time, const char *bucket,
                        const char *time_field, int64 from_seq, TailReading reading,
                        DirectTail **tails) {
    Relation rel = table_open(bucket_table, reading.lock ? RowShareLock : AccessShareLock);
    TupleDesc desc = RelationGetDescr(rel);
    AttrNumber start = SPI_fnumber(desc, "min_time");
    Relation index = nullptr;
    int keys = 0;
    if (inserts_directly(rel) && start > 0) {
        List *indexes = RelationGetIndexList(rel);
        ListCell *cell;
        foreach (cell, indexes) {
            Relation candidate = index_open(lfirst_oid(cell), AccessShareLock);
            if ((keys = leading_start_keys(candidate, 2, start)) > 0) {
                index = candidate;
                break;
            }
            index_close(candidate, AccessShareLock);
        }
    }
    if (index == nullptr) {
        table_close(rel, NoLock);
        return -1;
    }
    ScanKeyData key[2];
    for (int k = 0; k < keys; k++) {
        bool is_meta = keys == 2 && k == 0;
        if (is_meta && meta == nullptr) {
            ScanKeyEntryInitialize(&key[k], SK_ISNULL | SK_SEARCHNULL, 1, InvalidStrategy,
                                   InvalidOid, InvalidOid, InvalidOid, 0);
            continue;
        }
        equality_key(&key[k], index, k,
                     is_meta ? PointerGetDatum(meta) : TimestampTzGetDatum(min_time));
    }
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    IndexScanDesc scan = index_beginscan(rel, index, snapshot, keys, 0);
    index_rescan(scan, key, keys, nullptr, 0);
    int n = 0, allocated = 8;
    *tails = static_cast<DirectTail *>(palloc(sizeof(DirectTail) * allocated));
    while (index_getnext_slot(scan, ForwardScanDirection, slot)) {
        int64 seq = 0, first = 0;
        if (!tail_row_of(slot, keys == 1, meta, bucket, from_seq, &seq, &first))
            continue;
        bool traversed = false;
        if (reading.lock &&
            (!lock_skip_locked(rel, slot, snapshot, &traversed) ||
             (traversed && !tail_row_of(slot, true, meta, bucket, from_seq, &seq, &first))))
            continue;
        if (n == allocated) {
            allocated *= 2;
            *tails = static_cast<DirectTail *>(repalloc(*tails, sizeof(DirectTail) * allocated));
        }
        read_tail(slot, seq, first, time_field, reading.data, &(*tails)[n++]);
    }
    index_endscan(scan);
    ExecDropSingleTupleTableSlot(slot);
    UnregisterSnapshot(snapshot);
    index_close(index, AccessShareLock);
    table_close(rel, NoLock);
    if (reading.lock)
        CommandCounterIncrement();  // as SPI does after a statement: later ones see the locks
    return n;
}

namespace {

// The length of the row version at `offset` of the page in `buffer`
// (pinned), 0 if there is none.
Size version_length(Buffer buffer, OffsetNumber offset) {
    LockBuffer(buffer, BUFFER_LOCK_SHARE);
    Page page = BufferGetPage(buffer);
    Size length = 0;
    if (offset >= FirstOffsetNumber && offset <= PageGetMaxOffsetNumber(page)) {
        ItemId item = PageGetItemId(page, offset);
        if (ItemIdIsNormal(item))
            length = ItemIdGetLength(item);
    }
    LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
    return length;
}

}  // namespace

// The tail of `bucket` (hex) at seq `seq` whose row version is `version`,
// with its data, when that version is visible to the latest snapshot (a
// tail written again since is not): one heap fetch, where
// read_tails_directly scans an index. False otherwise, or when the table
// needs the query (inserts_directly).
bool read_tail_version_directly(Oid bucket_table, ItemPointerData version, const char *bucket,
                                const char *time_field, int64 seq, DirectTail *tail) {
    Relation rel = table_open(bucket_table, AccessShareLock);
    // A version seen before a rewrite of the table (VACUUM FULL) may be
    // past its end.
    if (!inserts_directly(rel) || !has_heap_pages(rel) ||
        ItemPointerGetBlockNumber(&version) >= RelationGetNumberOfBlocks(rel)) {
        table_close(rel, NoLock);
        return false;
    }
    // Pruned when it cannot hold the tail's next version, so that the
    // versions of a tail written in place follow one another on its page
    // (heap-only updates) rather than leave it with new index entries.
    Buffer buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(&version));
    prune_page(rel, buffer, 2 * version_length(buffer, ItemPointerGetOffsetNumber(&version)));
    ReleaseBuffer(buffer);
    Snapshot snapshot = RegisterSnapshot(GetLatestSnapshot());
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    int64 found_seq = 0, first = 0;
    bool found = table_tuple_fetch_row_version(rel, &version, SnapshotAny, slot) &&
                 table_tuple_satisfies_snapshot(rel, slot, snapshot) &&
                 tail_row_of(slot, false, nullptr, bucket, seq, &found_seq, &first) &&
                 found_seq == seq;
    if (found)
        read_tail(slot, seq, first, time_field, true, tail);
    ExecDropSingleTupleTableSlot(slot);
    UnregisterSnapshot(snapshot);
    table_close(rel, NoLock);
    return found;
}

// The ctid of a row version as the queries spell it (row_version).
std::optional<ItemPointerData> version_tid(const std::string &version) {
    unsigned block = 0, offset = 0;
    if (std::sscanf(version.c_str(), "(%u,%u)", &block, &offset) != 2)
        return std::nullopt;
    ItemPointerData tid;
    ItemPointerSet(&tid, block, static_cast<OffsetNumber>(offset));
    return tid;
}

// Writes the row of `id` at `version` (locked by this transaction) again
// with `control` and `data` (0: as they are), as logical replication
// applies an update (the generated min_time and max_time, constraints,
// TOAST, index entries unless the update is HOT), without planning and
// running an UPDATE (on the 8-client single-row load, writing rows again
// went from 3.0% of the backends' samples to 2.5%). Returns the new
// version, or nullptr when the table needs the statement
// (inserts_directly), `version` is not the row's latest (the statement
// finds that one) or, without `wait`, the row is being changed or is
// locked by another transaction, or its new version would not fit on its
// page (it is then left as it is). Sets `*hot` when the new version is
// heap-only.
char *update_row_directly(Oid bucket_table, const GeneratedTimes *times, Datum id,
                          ItemPointerData version, Datum control, Datum data, bool wait,
                          bool *hot) {
    *hot = false;
    Relation rel = table_open(bucket_table, RowExclusiveLock);
    if (!inserts_directly(rel)) {
        table_close(rel, NoLock);
        return nullptr;
    }
    // The generated columns to compute again: all of them, which is what
    // PostgreSQL does with no updatedCols, and what this field asks of
    // the minor releases that still read it.
    TupleDesc desc = RelationGetDescr(rel);
    Bitmapset *generated = nullptr;
    for (int c = 0; c < desc->natts; c++)
        if (TupleDescAttr(desc, c)->attgenerated == ATTRIBUTE_GENERATED_STORED)
            generated = bms_add_member(generated, c + 1 - FirstLowInvalidHeapAttributeNumber);
    EState *estate = writer_state(rel, generated);
    estate->es_snapshot = RegisterSnapshot(GetLatestSnapshot());
    ResultRelInfo *target = makeNode(ResultRelInfo);
    InitResultRelInfo(target, rel, 1, nullptr, 0);
    TupleTableSlot *old = table_slot_create(rel, &estate->es_tupleTable);
    TupleTableSlot *slot = table_slot_create(rel, &estate->es_tupleTable);
    char *written = nullptr;
    bool isnull = false;
    if (table_tuple_fetch_row_version(rel, &version, SnapshotAny, old) &&
        table_tuple_satisfies_snapshot(rel, old, estate->es_snapshot) &&
        datumIsEqual(slot_getattr(old, 1, &isnull), id, false, TupleDescAttr(desc, 0)->attlen)) {
        slot_getallattrs(old);
        ExecClearTuple(slot);
        for (int c = 0; c < desc->natts; c++) {
            slot->tts_values[c] = old->tts_values[c];
            slot->tts_isnull[c] = old->tts_isnull[c];
        }
        if (control != 0)
            slot->tts_values[2] = control;
        if (data != 0)
            slot->tts_values[3] = data;
        ExecStoreVirtualTuple(slot);
        if (update_slot(target, estate, old, slot, *times, wait, hot))
            written = row_version(&slot->tts_tid, GetCurrentTransactionId());
        ExecCloseIndices(target);
    }
    ExecResetTupleTable(estate->es_tupleTable, false);
    UnregisterSnapshot(estate->es_snapshot);
    FreeExecutorState(estate);
    table_close(rel, NoLock);
    // As SPI does after a statement: later queries see the new version.
    CommandCounterIncrement();
    return written;
}

}  // namespace tscoll::pg
