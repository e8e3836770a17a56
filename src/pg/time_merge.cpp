// The time merge (SPEC §5; doc/ARCHITECTURE.md, Time merge).
//
// A query that orders the view's rows by time gets a Sort over the Nested
// Loop that unpacks each bucket: it reads and keeps every row before it
// returns the first. But a bucket's measurements are no earlier than its
// control.min time (no later than control.max), and they are stored in
// time order unless they arrived out of order. So once the plan is made,
// such a Sort becomes this custom node, and the buckets reach the Nested
// Loop sorted by min_time (max_time for a descending order). The node
// keeps the rows in runs, each already in the Sort's order (a bucket's
// rows, split where they go backwards), and returns the first of the runs'
// heads as soon as no bucket still to come can hold an earlier row: when
// it precedes the bound of the last bucket read. The rows stream out as
// the buckets are read, and a LIMIT stops the reading.
//
// This file holds no C++ object with a destructor: the executor callbacks
// call PostgreSQL directly.
#include "pg/time_merge.hpp"

extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/stratnum.h"
#include "port/atomics.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"
}

#include <algorithm>
#include <initializer_list>

#include "pg/nodes.hpp"
#include "pg/unpack_scan.hpp"

namespace {

// ---------------------------------------------------------------------------
// Execution.

// A row of the Nested Loop, with its sort keys (pointing into the tuple).
struct MergeRow {
    MinimalTuple tuple;
    Datum *keys;
    bool *nulls;
};

// Rows in the Sort's order, of buckets with the same bound.
struct Run {
    MergeRow **rows;
    int count;
    int capacity;
    int next;  // the run's head
};

struct TimeMergeState {
    CustomScanState css;
    PlanState *loop;
    int nkeys;
    AttrNumber *key_columns;  // of the loop's rows; the first is the time
    SortSupport keys;
    AttrNumber bound_column;  // each row's bucket's min_time (max_time descending)
    int64 rows_needed;        // a LIMIT's count and offset above; 0 when unknown
    Datum *read_keys;         // the keys of the row read last
    bool *read_nulls;
    TupleTableSlot *row_slot;
    MemoryContext rows_context;
    Run **heap;  // the closed runs, by their heads
    int heap_size;
    int heap_capacity;
    Run *open;       // the run rows are added to
    Datum frontier;  // the bound of the last bucket read
    bool started;
    bool loop_done;
    Size kept_bytes;           // of the rows in runs
    Tuplesortstate *overflow;  // past work_mem: the rest of the rows, sorted
    bool overflowed;           // in any scan, for EXPLAIN ANALYZE
    Oid *operators;            // the Sort's, for the tuplesort
    Oid *collations;
    bool *nulls_first;
};

// <0, 0, >0 as a comes before, with, or after b in the Sort's order.
int compare_rows(TimeMergeState *merge, const MergeRow *a, const MergeRow *b) {
    for (int k = 0; k < merge->nkeys; k++) {
        int c =
            ApplySortComparator(a->keys[k], a->nulls[k], b->keys[k], b->nulls[k], &merge->keys[k]);
        if (c != 0)
            return c;
    }
    return 0;
}

// Whether time a comes before time b in the Sort's order.
bool time_precedes(TimeMergeState *merge, Datum a, Datum b) {
    return ApplySortComparator(a, false, b, false, &merge->keys[0]) < 0;
}

bool head_precedes(TimeMergeState *merge, int a, int b) {
    const Run *x = merge->heap[a];
    const Run *y = merge->heap[b];
    return compare_rows(merge, x->rows[x->next], y->rows[y->next]) < 0;
}

void swap_runs(TimeMergeState *merge, int a, int b) {
    Run *run = merge->heap[a];
    merge->heap[a] = merge->heap[b];
    merge->heap[b] = run;
}

void sift_down(TimeMergeState *merge, int i) {
    for (;;) {
        int first = i;
        for (int child : {2 * i + 1, 2 * i + 2})
            if (child < merge->heap_size && head_precedes(merge, child, first))
                first = child;
        if (first == i)
            return;
        swap_runs(merge, i, first);
        i = first;
    }
}

void close_open_run(TimeMergeState *merge) {
    if (merge->open == nullptr)
        return;
    if (merge->heap_size == merge->heap_capacity) {
        merge->heap_capacity *= 2;
        merge->heap =
            static_cast<Run **>(repalloc(merge->heap, merge->heap_capacity * sizeof(Run *)));
    }
    int i = merge->heap_size++;
    merge->heap[i] = merge->open;
    merge->open = nullptr;
    while (i > 0 && head_precedes(merge, i, (i - 1) / 2)) {
        swap_runs(merge, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

// A copy of the loop's row, with its keys.
MergeRow *copy_row(TimeMergeState *merge, TupleTableSlot *slot) {
    MemoryContext caller = MemoryContextSwitchTo(merge->rows_context);
    auto *row = static_cast<MergeRow *>(
        palloc(sizeof(MergeRow) + merge->nkeys * (sizeof(Datum) + sizeof(bool))));
    row->keys = reinterpret_cast<Datum *>(row + 1);
    row->nulls = reinterpret_cast<bool *>(row->keys + merge->nkeys);
    row->tuple = ExecCopySlotMinimalTuple(slot);
    MemoryContextSwitchTo(caller);
    HeapTupleData tuple;
    tuple.t_len = row->tuple->t_len + MINIMAL_TUPLE_OFFSET;
    tuple.t_data = reinterpret_cast<HeapTupleHeader>(reinterpret_cast<char *>(row->tuple) -
                                                     MINIMAL_TUPLE_OFFSET);
    for (int k = 0; k < merge->nkeys; k++)
        row->keys[k] =
            heap_getattr(&tuple, merge->key_columns[k], slot->tts_tupleDescriptor, &row->nulls[k]);
    return row;
}

void append_row(TimeMergeState *merge, MergeRow *row) {
    Run *run = merge->open;
    if (run == nullptr) {
        run = static_cast<Run *>(MemoryContextAllocZero(merge->rows_context, sizeof(Run)));
        run->capacity = 64;
        run->rows = static_cast<MergeRow **>(
            MemoryContextAlloc(merge->rows_context, run->capacity * sizeof(MergeRow *)));
        merge->open = run;
    } else if (run->count == run->capacity) {
        run->capacity *= 2;
        run->rows =
            static_cast<MergeRow **>(repalloc(run->rows, run->capacity * sizeof(MergeRow *)));
    }
    run->rows[run->count++] = row;
}

// Takes in the loop's next row; false when there are no more.
bool read_row(TimeMergeState *merge) {
    TupleTableSlot *slot = ExecProcNode(merge->loop);
    if (TupIsNull(slot))
        return false;
    slot_getallattrs(slot);
    MergeRow row = {nullptr, merge->read_keys, merge->read_nulls};
    for (int k = 0; k < merge->nkeys; k++) {
        row.keys[k] = slot->tts_values[merge->key_columns[k] - 1];
        row.nulls[k] = slot->tts_isnull[merge->key_columns[k] - 1];
    }
    Datum bound = slot->tts_values[merge->bound_column - 1];
    if (slot->tts_isnull[merge->bound_column - 1] || row.nulls[0] ||
        time_precedes(merge, row.keys[0], bound))
        ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                        errmsg("bucket data is corrupt: a measurement's time is outside its "
                               "bucket's control.min and control.max")));
    if (merge->started && time_precedes(merge, bound, merge->frontier))
        elog(ERROR, "tscoll time merge: buckets out of order");
    Run *open = merge->open;
    bool follows = open != nullptr && bound == merge->frontier &&
                   compare_rows(merge, &row, open->rows[open->count - 1]) >= 0;
    merge->frontier = bound;
    merge->started = true;
    // The first rows_needed rows of a run all come before this one.
    if (follows && merge->rows_needed > 0 && open->count >= merge->rows_needed)
        return true;
    if (open != nullptr && !follows)
        close_open_run(merge);
    MergeRow *kept = copy_row(merge, slot);
    merge->kept_bytes += GetMemoryChunkSpace(kept->tuple) + GetMemoryChunkSpace(kept);
    append_row(merge, kept);
    return true;
}

// `from`'s row in the scan slot `to`, which is virtual, as
// ExecInitCustomScan made it and the expressions reading it expect: it
// points into `from`'s row, valid while `from` holds it.
TupleTableSlot *store_virtual(TupleTableSlot *to, TupleTableSlot *from) {
    ExecClearTuple(to);
    slot_getallattrs(from);
    int width = to->tts_tupleDescriptor->natts;
    memcpy(to->tts_values, from->tts_values, width * sizeof(Datum));
    memcpy(to->tts_isnull, from->tts_isnull, width * sizeof(bool));
    return ExecStoreVirtualTuple(to);
}

TupleTableSlot *returned(TimeMergeState *merge) {
    return store_virtual(merge->css.ss.ss_ScanTupleSlot, merge->row_slot);
}

// Returns the first head of the runs and moves past it.
TupleTableSlot *take_first(TimeMergeState *merge) {
    Run *run = merge->heap[0];
    MergeRow *row = run->rows[run->next];
    run->rows[run->next++] = nullptr;
    ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    merge->kept_bytes -= GetMemoryChunkSpace(row->tuple) + GetMemoryChunkSpace(row);
    ExecStoreMinimalTuple(row->tuple, merge->row_slot, true);
    pfree(row);
    if (run->next == run->count) {
        pfree(run->rows);
        pfree(run);
        merge->heap[0] = merge->heap[--merge->heap_size];
    }
    sift_down(merge, 0);
    return returned(merge);
}

void clear_runs(TimeMergeState *merge) {
    ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    ExecClearTuple(merge->row_slot);
    MemoryContextReset(merge->rows_context);
    merge->heap_capacity = 64;
    merge->heap = static_cast<Run **>(
        MemoryContextAlloc(merge->rows_context, merge->heap_capacity * sizeof(Run *)));
    merge->heap_size = 0;
    merge->open = nullptr;
    merge->kept_bytes = 0;
}

// Past work_mem (many buckets share a bound), the rows not yet returned,
// kept and still to come, go to a tuplesort, which spills to disk. Every
// row returned so far comes before all of them.
void sort_the_rest(TimeMergeState *merge) {
    merge->overflow = tuplesort_begin_heap(merge->row_slot->tts_tupleDescriptor, merge->nkeys,
                                           merge->key_columns, merge->operators, merge->collations,
                                           merge->nulls_first, work_mem, nullptr, TUPLESORT_NONE);
    if (merge->rows_needed > 0)
        tuplesort_set_bound(merge->overflow, merge->rows_needed);
    close_open_run(merge);
    ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    for (int i = 0; i < merge->heap_size; i++) {
        const Run *run = merge->heap[i];
        for (int r = run->next; r < run->count; r++) {
            ExecStoreMinimalTuple(run->rows[r]->tuple, merge->row_slot, false);
            tuplesort_puttupleslot(merge->overflow, merge->row_slot);
        }
    }
    clear_runs(merge);
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        TupleTableSlot *slot = ExecProcNode(merge->loop);
        if (TupIsNull(slot))
            break;
        tuplesort_puttupleslot(merge->overflow, slot);
    }
    tuplesort_performsort(merge->overflow);
    merge->loop_done = true;
    merge->overflowed = true;
}

TupleTableSlot *next_row(ScanState *node) {
    auto *merge = reinterpret_cast<TimeMergeState *>(node);
    if (merge->overflow != nullptr) {
        if (tuplesort_gettupleslot(merge->overflow, true, false, merge->row_slot, nullptr))
            return returned(merge);
        return ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    }
    for (;;) {
        if (merge->heap_size > 0) {
            const Run *first = merge->heap[0];
            if (merge->loop_done ||
                time_precedes(merge, first->rows[first->next]->keys[0], merge->frontier))
                return take_first(merge);
        }
        if (merge->loop_done)
            return ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
        CHECK_FOR_INTERRUPTS();
        if (!read_row(merge)) {
            close_open_run(merge);
            merge->loop_done = true;
        } else if (merge->kept_bytes > static_cast<Size>(work_mem) * 1024) {
            sort_the_rest(merge);
            return next_row(node);
        }
    }
}

bool recheck_row(ScanState *, TupleTableSlot *) {
    return true;
}

void reset_runs(TimeMergeState *merge) {
    if (merge->overflow != nullptr)
        tuplesort_end(merge->overflow);
    merge->overflow = nullptr;
    clear_runs(merge);
    merge->started = false;
    merge->loop_done = false;
}

void begin_merge(CustomScanState *node, EState *estate, int eflags) {
    auto *merge = reinterpret_cast<TimeMergeState *>(node);
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    if ((eflags & (EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0)
        elog(ERROR, "tscoll time merge: cannot scan backward or restore a position");
    merge->loop = ExecInitNode(static_cast<Plan *>(linitial(plan->custom_plans)), estate, eflags);
    node->custom_ps = list_make1(merge->loop);
    List *columns = static_cast<List *>(linitial(plan->custom_private));
    List *operators = static_cast<List *>(lsecond(plan->custom_private));
    List *collations = static_cast<List *>(lthird(plan->custom_private));
    List *nulls_first = static_cast<List *>(lfourth(plan->custom_private));
    merge->bound_column = static_cast<AttrNumber>(intVal(list_nth(plan->custom_private, 4)));
    merge->rows_needed = static_cast<int64>(intVal(list_nth(plan->custom_private, 5)));
    merge->nkeys = list_length(columns);
    merge->key_columns = static_cast<AttrNumber *>(palloc(merge->nkeys * sizeof(AttrNumber)));
    merge->keys = static_cast<SortSupport>(palloc0(merge->nkeys * sizeof(SortSupportData)));
    merge->read_keys = static_cast<Datum *>(palloc(merge->nkeys * sizeof(Datum)));
    merge->read_nulls = static_cast<bool *>(palloc(merge->nkeys * sizeof(bool)));
    merge->operators = static_cast<Oid *>(palloc(merge->nkeys * sizeof(Oid)));
    merge->collations = static_cast<Oid *>(palloc(merge->nkeys * sizeof(Oid)));
    merge->nulls_first = static_cast<bool *>(palloc(merge->nkeys * sizeof(bool)));
    for (int k = 0; k < merge->nkeys; k++) {
        merge->operators[k] = list_nth_oid(operators, k);
        merge->collations[k] = list_nth_oid(collations, k);
        merge->nulls_first[k] = list_nth_int(nulls_first, k) != 0;
        merge->key_columns[k] = static_cast<AttrNumber>(list_nth_int(columns, k));
        SortSupport key = &merge->keys[k];
        key->ssup_cxt = CurrentMemoryContext;
        key->ssup_collation = merge->collations[k];
        key->ssup_nulls_first = merge->nulls_first[k];
        key->ssup_attno = merge->key_columns[k];
        PrepareSortSupportFromOrderingOp(merge->operators[k], key);
    }
    merge->row_slot = ExecInitExtraTupleSlot(estate, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
                                             &TTSOpsMinimalTuple);
    merge->rows_context =
        AllocSetContextCreate(CurrentMemoryContext, "tscoll time merge", ALLOCSET_DEFAULT_SIZES);
    reset_runs(merge);
}

TupleTableSlot *exec_merge(CustomScanState *node) {
    return ExecScan(&node->ss, next_row, recheck_row);
}

void rescan_merge(CustomScanState *node) {
    auto *merge = reinterpret_cast<TimeMergeState *>(node);
    reset_runs(merge);
    if (node->ss.ps.chgParam != nullptr)
        UpdateChangedParamSet(merge->loop, node->ss.ps.chgParam);
    if (merge->loop->chgParam == nullptr)
        ExecReScan(merge->loop);
    ExecScanReScan(&node->ss);
}

void end_merge(CustomScanState *node) {
    auto *merge = reinterpret_cast<TimeMergeState *>(node);
    ExecClearTuple(node->ss.ss_ScanTupleSlot);
    ExecClearTuple(merge->row_slot);
    if (node->ss.ps.ps_ResultTupleSlot != nullptr)
        ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
    if (merge->overflow != nullptr)
        tuplesort_end(merge->overflow);
    MemoryContextDelete(merge->rows_context);
    ExecEndNode(merge->loop);
}

void explain_merge(CustomScanState *node, List *ancestors, ExplainState *es) {
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    if (es->analyze && reinterpret_cast<TimeMergeState *>(node)->overflowed)
        ExplainPropertyText("Past work_mem", "the rest sorted", es);
    List *context = set_deparse_context_plan(es->deparse_cxt, &plan->scan.plan, ancestors);
    List *columns = static_cast<List *>(linitial(plan->custom_private));
    List *operators = static_cast<List *>(lsecond(plan->custom_private));
    List *keys = NIL;
    for (int k = 0; k < list_length(columns); k++) {
        auto *entry = static_cast<TargetEntry *>(
            list_nth(plan->custom_scan_tlist, list_nth_int(columns, k) - 1));
        char *text = deparse_expression(reinterpret_cast<Node *>(entry->expr), context,
                                        list_length(es->rtable) > 1, false);
        TypeCacheEntry *type =
            lookup_type_cache(exprType(reinterpret_cast<Node *>(entry->expr)), TYPECACHE_LT_OPR);
        if (list_nth_oid(operators, k) != type->lt_opr)
            text = psprintf("%s DESC", text);
        keys = lappend(keys, text);
    }
    ExplainPropertyList("Merge Key", keys, es);
    if (int rows_needed = intVal(list_nth(plan->custom_private, 5)))
        ExplainPropertyInteger("Rows Kept Per Run", nullptr, rows_needed, es);
    auto *last = static_cast<TargetEntry *>(llast(plan->custom_scan_tlist));
    ExplainPropertyText("Buckets In Order Of",
                        deparse_expression(reinterpret_cast<Node *>(last->expr), context,
                                           list_length(es->rtable) > 1, false),
                        es);
}

Node *create_merge_state(CustomScan *plan);

const CustomScanMethods kMergeMethods = {"TscollTimeMerge", create_merge_state};

const CustomExecMethods kMergeExecMethods = {
    "TscollTimeMerge", begin_merge, exec_merge, end_merge, rescan_merge, nullptr,       nullptr,
    nullptr,           nullptr,     nullptr,    nullptr,   nullptr,      explain_merge,
};

Node *create_merge_state(CustomScan *plan) {
    auto *merge = static_cast<TimeMergeState *>(palloc0(sizeof(TimeMergeState)));
    NodeSetTag(merge, T_CustomScanState);
    merge->css.methods = &kMergeExecMethods;
    return reinterpret_cast<Node *>(merge);
}

// ---------------------------------------------------------------------------
// The bucket claim, below the merge of a parallel plan: every participant
// reads all the buckets in the same order, and returns those it claims
// from a counter they share, one at a time. Each participant's buckets
// stay in bound order, and none takes them all before the others start.

struct ClaimShared {
    pg_atomic_uint64 next;  // the position of the next bucket to claim
};

struct ClaimState {
    CustomScanState css;
    PlanState *buckets;
    ClaimShared *shared;  // nullptr outside a parallel query: all are ours
    uint64 position;      // of the next bucket read
    uint64 claimed;       // the position claimed, when has_claim
    bool has_claim;
};

void begin_claim(CustomScanState *node, EState *estate, int eflags) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    claim->buckets =
        ExecInitNode(static_cast<Plan *>(linitial(plan->custom_plans)), estate, eflags);
    node->custom_ps = list_make1(claim->buckets);
}

TupleTableSlot *exec_claim(CustomScanState *node) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    TupleTableSlot *result = node->ss.ss_ScanTupleSlot;
    ExecClearTuple(result);
    for (;;) {
        if (!claim->has_claim) {
            claim->claimed = claim->shared != nullptr
                                 ? pg_atomic_fetch_add_u64(&claim->shared->next, 1)
                                 : claim->position;
            claim->has_claim = true;
        }
        TupleTableSlot *bucket = ExecProcNode(claim->buckets);
        if (TupIsNull(bucket))
            return result;
        if (claim->position++ != claim->claimed)
            continue;
        claim->has_claim = false;
        return store_virtual(result, bucket);
    }
}

void rescan_claim(CustomScanState *node) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    claim->position = 0;
    claim->has_claim = false;
    if (node->ss.ps.chgParam != nullptr)
        UpdateChangedParamSet(claim->buckets, node->ss.ps.chgParam);
    if (claim->buckets->chgParam == nullptr)
        ExecReScan(claim->buckets);
}

void end_claim(CustomScanState *node) {
    ExecClearTuple(node->ss.ss_ScanTupleSlot);
    ExecEndNode(reinterpret_cast<ClaimState *>(node)->buckets);
}

Size estimate_claim(CustomScanState *, ParallelContext *) {
    return sizeof(ClaimShared);
}

void initialize_claim(CustomScanState *node, ParallelContext *, void *coordinate) {
    auto *shared = static_cast<ClaimShared *>(coordinate);
    pg_atomic_init_u64(&shared->next, 0);
    reinterpret_cast<ClaimState *>(node)->shared = shared;
}

void reinitialize_claim(CustomScanState *node, ParallelContext *, void *coordinate) {
    pg_atomic_write_u64(&static_cast<ClaimShared *>(coordinate)->next, 0);
}

void initialize_claim_worker(CustomScanState *node, shm_toc *, void *coordinate) {
    reinterpret_cast<ClaimState *>(node)->shared = static_cast<ClaimShared *>(coordinate);
}

void explain_claim(CustomScanState *, List *, ExplainState *es) {
    ExplainPropertyText("Buckets Claimed", "one at a time by each participant, in bound order", es);
}

Node *create_claim_state(CustomScan *plan);

const CustomScanMethods kClaimMethods = {"TscollBucketClaim", create_claim_state};

const CustomExecMethods kClaimExecMethods = {
    "TscollBucketClaim",
    begin_claim,
    exec_claim,
    end_claim,
    rescan_claim,
    nullptr,
    nullptr,
    estimate_claim,
    initialize_claim,
    reinitialize_claim,
    initialize_claim_worker,
    nullptr,
    explain_claim,
};

Node *create_claim_state(CustomScan *plan) {
    auto *claim = static_cast<ClaimState *>(palloc0(sizeof(ClaimState)));
    NodeSetTag(claim, T_CustomScanState);
    claim->css.methods = &kClaimExecMethods;
    return reinterpret_cast<Node *>(claim);
}

// ---------------------------------------------------------------------------
// Planning: after PostgreSQL has made the plan.

// `node`, an expression over the rows of `plan`, in terms of the range
// table's columns, for EXPLAIN: references to a child's output are
// replaced by the child's expressions, down to the scans.
Node *over_relations(Node *node, Plan *plan) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Var)) {
        auto *var = reinterpret_cast<Var *>(node);
        Plan *child = var->varno == OUTER_VAR   ? outerPlan(plan)
                      : var->varno == INNER_VAR ? innerPlan(plan)
                                                : nullptr;
        List *targetlist = child != nullptr ? child->targetlist : NIL;
        if (var->varno == INDEX_VAR && IsA(plan, CustomScan))
            targetlist = reinterpret_cast<CustomScan *>(plan)->custom_scan_tlist;
        if (var->varattno < 1 || var->varattno > list_length(targetlist))
            return reinterpret_cast<Node *>(tscoll::pg::copy_node(var));
        Node *expr = reinterpret_cast<Node *>(
            list_nth_node(TargetEntry, targetlist, var->varattno - 1)->expr);
        return child != nullptr ? over_relations(expr, child)
                                : reinterpret_cast<Node *>(copyObjectImpl(expr));
    }
    return expression_tree_mutator(node, tscoll::pg::mutator(over_relations), plan);
}

// `plan`'s target list in terms of the range table's columns: the scan
// tuple (custom_scan_tlist) of a custom scan reading its rows.
List *relations_tlist(Plan *plan) {
    List *result = NIL;
    ListCell *lc;
    foreach (lc, plan->targetlist) {
        auto *entry = tscoll::pg::copy_node(lfirst_node(TargetEntry, lc));
        entry->expr =
            reinterpret_cast<Expr *>(over_relations(reinterpret_cast<Node *>(entry->expr), plan));
        result = lappend(result, entry);
    }
    return result;
}

// Whether the loop's output column `column` is the unpack scan's time.
bool is_unpacked_time(NestLoop *loop, AttrNumber column) {
    List *targetlist = loop->join.plan.targetlist;
    if (column < 1 || column > list_length(targetlist))
        return false;
    Expr *expr = list_nth_node(TargetEntry, targetlist, column - 1)->expr;
    if (!IsA(expr, Var) || reinterpret_cast<Var *>(expr)->varno != INNER_VAR)
        return false;
    List *inner = innerPlan(loop)->targetlist;
    AttrNumber attno = reinterpret_cast<Var *>(expr)->varattno;
    if (attno < 1 || attno > list_length(inner))
        return false;
    Expr *scanned = list_nth_node(TargetEntry, inner, attno - 1)->expr;
    return IsA(scanned, Var) && reinterpret_cast<Var *>(scanned)->varno == INDEX_VAR &&
           reinterpret_cast<Var *>(scanned)->varattno == 1;
}

bool is_table_scan(const Plan *plan) {
    switch (nodeTag(plan)) {
        case T_SeqScan:
        case T_SampleScan:
        case T_IndexScan:
        case T_BitmapHeapScan:
        case T_TidScan:
        case T_TidRangeScan:
            return true;
        default:
            return false;
    }
}

// The position in the scan's output of the bucket table's column `name`,
// added to its output if needed; 0 when the scan does not read the table.
AttrNumber scan_column(Plan *scan, Oid relid, const char *name, List *rtable) {
    if (!is_table_scan(scan))
        return 0;
    Index scanrelid = reinterpret_cast<Scan *>(scan)->scanrelid;
    if (rt_fetch(scanrelid, rtable)->relid != relid)
        return 0;
    AttrNumber attno = get_attnum(relid, name);
    if (attno == InvalidAttrNumber)
        return 0;
    ListCell *lc;
    foreach (lc, scan->targetlist) {
        auto *entry = lfirst_node(TargetEntry, lc);
        auto *var = reinterpret_cast<Var *>(entry->expr);
        if (IsA(var, Var) && var->varno == static_cast<int>(scanrelid) && var->varattno == attno)
            return entry->resno;
    }
    Oid type = InvalidOid, collation = InvalidOid;
    int32 typmod = -1;
    get_atttypetypmodcoll(relid, attno, &type, &typmod, &collation);
    Var *column = makeVar(scanrelid, attno, type, typmod, collation, 0);
    AttrNumber resno = static_cast<AttrNumber>(list_length(scan->targetlist) + 1);
    scan->targetlist = lappend(scan->targetlist, makeTargetEntry(reinterpret_cast<Expr *>(column),
                                                                 resno, pstrdup(name), false));
    return resno;
}

// A target list of Vars `varno` for each column of `plan`.
List *passed_on(Plan *plan, int varno) {
    List *result = NIL;
    ListCell *lc;
    foreach (lc, plan->targetlist) {
        auto *entry = lfirst_node(TargetEntry, lc);
        Var *var = makeVarFromTargetEntry(varno, entry);
        result = lappend(result, makeTargetEntry(reinterpret_cast<Expr *>(var), entry->resno,
                                                 entry->resname, entry->resjunk));
    }
    return result;
}

// `outer`'s rows sorted by its columns `columns` with `operators`.
Plan *sorted_by(Plan *outer, std::initializer_list<AttrNumber> columns,
                std::initializer_list<Oid> operators, int plan_node_id) {
    Sort *sort = makeNode(Sort);
    Plan *plan = &sort->plan;
    plan->startup_cost = outer->total_cost;
    plan->total_cost = outer->total_cost;
    plan->plan_rows = outer->plan_rows;
    plan->plan_width = outer->plan_width;
    plan->parallel_safe = outer->parallel_safe;
    plan->plan_node_id = plan_node_id;
    plan->targetlist = passed_on(outer, OUTER_VAR);
    plan->extParam = bms_copy(outer->extParam);
    plan->allParam = bms_copy(outer->allParam);
    plan->lefttree = outer;
    sort->numCols = static_cast<int>(columns.size());
    sort->sortColIdx = static_cast<AttrNumber *>(palloc(sort->numCols * sizeof(AttrNumber)));
    sort->sortOperators = static_cast<Oid *>(palloc(sort->numCols * sizeof(Oid)));
    sort->collations = static_cast<Oid *>(palloc0(sort->numCols * sizeof(Oid)));
    sort->nullsFirst = static_cast<bool *>(palloc0(sort->numCols * sizeof(bool)));
    std::copy(columns.begin(), columns.end(), sort->sortColIdx);
    std::copy(operators.begin(), operators.end(), sort->sortOperators);
    for (int k = 0; k < sort->numCols; k++) {
        Oid family = InvalidOid, type = InvalidOid;
        int16 strategy = 0;
        get_ordering_op_properties(sort->sortOperators[k], &family, &type, &strategy);
        sort->nullsFirst[k] = strategy == BTGreaterStrategyNumber;  // DESC's default
    }
    return plan;
}

// The claim of `sorted`'s buckets, over it.
Plan *claimed(Plan *sorted, int plan_node_id) {
    CustomScan *claim = makeNode(CustomScan);
    Plan *plan = &claim->scan.plan;
    plan->startup_cost = sorted->startup_cost;
    plan->total_cost = sorted->total_cost;
    plan->plan_rows = sorted->plan_rows;
    plan->plan_width = sorted->plan_width;
    plan->parallel_aware = true;
    plan->parallel_safe = true;
    plan->plan_node_id = plan_node_id;
    plan->targetlist = passed_on(sorted, INDEX_VAR);
    plan->extParam = bms_copy(sorted->extParam);
    plan->allParam = bms_copy(sorted->allParam);
    claim->custom_scan_tlist = relations_tlist(sorted);
    claim->custom_plans = list_make1(sorted);
    claim->methods = &kClaimMethods;
    return plan;
}

struct Rewrite {
    List *rtable;
    int next_plan_node_id;
};

// The time merge for `sort`, or nullptr when its input is not a Nested
// Loop over buckets and their unpack scan, with time as the first key.
// `rows_needed` is how many rows a LIMIT above reads at most (0: unknown).
Plan *time_merge(Sort *sort, int rows_needed, Rewrite *rewrite) {
    auto *loop = reinterpret_cast<NestLoop *>(outerPlan(&sort->plan));
    if (loop == nullptr || !IsA(loop, NestLoop) || loop->join.jointype != JOIN_INNER ||
        sort->numCols < 1 || !is_unpacked_time(loop, sort->sortColIdx[0]))
        return nullptr;
    Oid buckets = tscoll::pg::measurement_unpack_source(innerPlan(loop));
    TypeCacheEntry *times = lookup_type_cache(TIMESTAMPTZOID, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
    bool ascending = sort->sortOperators[0] == times->lt_opr;
    if (!OidIsValid(buckets) || (!ascending && sort->sortOperators[0] != times->gt_opr))
        return nullptr;
    // A parallel Sort of all the rows costs less than merging them: the
    // merge's per-row copy and comparisons are what the Sort's are, and it
    // adds its own. The merge pays when a LIMIT stops it early.
    Plan *outer = outerPlan(loop);
    if (outer->parallel_aware && rows_needed == 0)
        return nullptr;
    AttrNumber bound =
        scan_column(outer, buckets, ascending ? "min_time" : "max_time", rewrite->rtable);
    if (bound == 0)
        return nullptr;
    if (!outer->parallel_aware) {
        outerPlan(loop) =
            sorted_by(outer, {bound}, {sort->sortOperators[0]}, rewrite->next_plan_node_id++);
    } else {
        // Sorting a parallel scan's share of the buckets would have the
        // first participant take them all before the others start. Each
        // scans them all instead, in the same order (bound, then _id), and
        // claims them in turn.
        AttrNumber id = scan_column(outer, buckets, "_id", rewrite->rtable);
        Oid id_type = exprType(
            reinterpret_cast<Node *>(list_nth_node(TargetEntry, outer->targetlist, id - 1)->expr));
        outer->parallel_aware = false;
        Plan *sorted = sorted_by(
            outer, {bound, id},
            {sort->sortOperators[0], lookup_type_cache(id_type, TYPECACHE_LT_OPR)->lt_opr},
            rewrite->next_plan_node_id++);
        outerPlan(loop) = claimed(sorted, rewrite->next_plan_node_id++);
    }
    List *&loop_targets = loop->join.plan.targetlist;
    Var *bound_var = makeVar(OUTER_VAR, bound, TIMESTAMPTZOID, -1, InvalidOid, 0);
    loop_targets = lappend(loop_targets, makeTargetEntry(reinterpret_cast<Expr *>(bound_var),
                                                         list_length(loop_targets) + 1,
                                                         pstrdup("bucket_bound"), true));

    CustomScan *merge = makeNode(CustomScan);
    merge->scan.plan = sort->plan;  // costs, parameters, parallel safety
    merge->scan.plan.type = T_CustomScan;
    merge->scan.plan.lefttree = nullptr;
    merge->scan.plan.targetlist = passed_on(&sort->plan, INDEX_VAR);
    merge->scan.scanrelid = 0;
    merge->custom_plans = list_make1(loop);
    merge->custom_scan_tlist = relations_tlist(&loop->join.plan);
    List *columns = NIL, *operators = NIL, *collations = NIL, *nulls_first = NIL;
    for (int k = 0; k < sort->numCols; k++) {
        columns = lappend_int(columns, sort->sortColIdx[k]);
        operators = lappend_oid(operators, sort->sortOperators[k]);
        collations = lappend_oid(collations, sort->collations[k]);
        nulls_first = lappend_int(nulls_first, sort->nullsFirst[k] ? 1 : 0);
    }
    merge->custom_private = list_make5(columns, operators, collations, nulls_first,
                                       makeInteger(list_length(loop_targets)));
    merge->custom_private = lappend(merge->custom_private, makeInteger(rows_needed));
    merge->methods = &kMergeMethods;
    return &merge->scan.plan;
}

// What a node's parent needs of it.
struct Parent {
    bool marks;       // a Merge Join's inner side: a position marked and restored
    int rows_needed;  // at most this many rows, for a LIMIT; 0 when unknown
};

// The rows a LIMIT with constant count and offset reads; 0 when unknown.
int limit_rows(const Limit *limit) {
    auto constant = [](Node *node, int64 *value) {
        if (node == nullptr)
            return true;
        if (!IsA(node, Const) || castNode(Const, node)->consttype != INT8OID)
            return false;
        *value = castNode(Const, node)->constisnull
                     ? 0
                     : DatumGetInt64(castNode(Const, node)->constvalue);
        return true;
    };
    int64 count = 0, offset = 0;
    if (limit->limitOption != LIMIT_OPTION_COUNT || limit->limitCount == nullptr ||
        !constant(limit->limitCount, &count) || !constant(limit->limitOffset, &offset) ||
        count <= 0 || offset < 0 || count > INT_MAX - offset)
        return 0;
    return static_cast<int>(count + offset);
}

// `plan` with its Sorts of unpacked measurements by time replaced.
Plan *replace_sorts(Plan *plan, Parent parent, Rewrite *rewrite) {
    if (plan == nullptr)
        return nullptr;
    Parent outer = {false, 0};
    if (IsA(plan, Limit))
        outer.rows_needed = limit_rows(reinterpret_cast<Limit *>(plan));
    else if (IsA(plan, GatherMerge))  // each worker's first rows, then the leader's merge
        outer.rows_needed = parent.rows_needed;
    tscoll::pg::for_each_child(plan, [&](Plan *&child, tscoll::pg::ChildSide side) {
        Parent of_child = side == tscoll::pg::ChildSide::Outer ? outer : Parent{false, 0};
        of_child.marks = side == tscoll::pg::ChildSide::Inner && IsA(plan, MergeJoin);
        child = replace_sorts(child, of_child, rewrite);
    });
    if (!IsA(plan, Sort) || parent.marks)
        return plan;
    Plan *merge = time_merge(reinterpret_cast<Sort *>(plan), parent.rows_needed, rewrite);
    return merge != nullptr ? merge : plan;
}

void highest_plan_node_id(Plan *plan, int *highest) {
    if (plan == nullptr)
        return;
    *highest = std::max(*highest, plan->plan_node_id);
    tscoll::pg::for_each_child(
        plan, [&](Plan *&child, tscoll::pg::ChildSide) { highest_plan_node_id(child, highest); });
}

}  // namespace

namespace tscoll::pg {

void register_time_merge() {
    RegisterCustomScanMethods(&kMergeMethods);
    RegisterCustomScanMethods(&kClaimMethods);
}

void use_time_merges(PlannedStmt *stmt) {
    // New Sorts need plan node ids of their own: parallel workers find
    // their nodes' shared state by it.
    int highest = 0;
    highest_plan_node_id(stmt->planTree, &highest);
    ListCell *lc;
    foreach (lc, stmt->subplans)
        highest_plan_node_id(static_cast<Plan *>(lfirst(lc)), &highest);
    Rewrite rewrite = {stmt->rtable, highest + 1};
    stmt->planTree = replace_sorts(stmt->planTree, {false, 0}, &rewrite);
    foreach (lc, stmt->subplans)
        lfirst(lc) = replace_sorts(static_cast<Plan *>(lfirst(lc)), {false, 0}, &rewrite);
}

}  // namespace tscoll::pg
