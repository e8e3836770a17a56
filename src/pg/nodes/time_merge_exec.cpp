// The time merge (doc/REFERENCE.md §3.4, SELECT; doc/ARCHITECTURE.md,
// Time merge).
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
#include "pg/nodes/time_merge_nodes.hpp"

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
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/sortsupport.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"
}

#include <algorithm>
#include <initializer_list>

#include "pg/node_trees.hpp"
#include "pg/nodes/unpack_scan.hpp"

namespace {

using tscoll::pg::time_merge::store_virtual;

// ---------------------------------------------------------------------------
// Execution.

// The values of the keys after the time that every row of a bucket shares,
// being the bucket row's (meta expressions), with their rank in the Sort's
// order among those of the runs kept: runs are then compared by rank, not
// by value, when their times tie (TSBS: every host at every tick).
struct Series {
    Datum *keys;  // of the keys 1 .. series_keys
    bool *nulls;
    int64 rank;
    int runs;  // the runs kept of the series
};

// The copies of the rows' by-reference values, packed one after another
// in blocks, each value after a pointer to its block. A value copied by
// palloc alone takes the next power of two: a 600-byte document, 1 KB, so
// that rows which fit work_mem twice over were sorted on disk. A block
// goes back when the last of its values is released (rows are returned
// about in the order they were read, so blocks empty one by one).
struct ValueBlock {
    Size used;   // bytes of data taken
    Size size;   // bytes of data
    int64 live;  // values not yet released
};

constexpr Size kValueBlockSize = 64 * 1024;

// Rows in the Sort's order, of buckets with the same bound and series: the
// Nested Loop's rows, each `width` values and nulls.
struct Run {
    Datum *values;
    bool *nulls;
    int count;
    int capacity;
    int next;               // the run's head
    TimestampTz head_time;  // row `next`'s, kept here for the heap's comparisons
    Series *series;         // nullptr when not ranked: compared by value
    bool shares;            // the rows' series keys are the series' own copies
};

struct TimeMergeState {
    CustomScanState css;
    PlanState *loop;
    int width;  // of the loop's rows
    int nkeys;
    AttrNumber *key_columns;  // of the loop's rows; the first is the time
    bool descending;          // the time's order
    SortSupport keys;
    int series_keys;          // keys 1 .. series_keys are the bucket row's
    int *series_key_of;       // per column: its series key, or -1
    bool *by_reference;       // per column
    int16 *lengths;           // per column
    AttrNumber bound_column;  // each row's bucket's min_time (max_time descending)
    int64 rows_needed;        // a LIMIT's count and offset above; 0 when unknown
    MemoryContext rows_context;
    Series **ranked;  // by rank
    int ranked_count;
    Run **heap;  // the closed runs, by their heads
    int heap_size;
    int heap_capacity;
    Run *open;                // the run rows are added to
    ValueBlock *value_block;  // the block copies of values go to
    Datum *returned;          // copies of values of the row returned last, to release
    int returned_count;
    Datum frontier;  // the bound of the last bucket read
    bool started;
    bool loop_done;
    Size kept_bytes;  // of the runs and their copies of values
    TupleTableSlot *sort_slot;
    Tuplesortstate *overflow;  // past work_mem: the rest of the rows, sorted
    bool overflowed;           // in any scan, for EXPLAIN ANALYZE
    Oid *operators;            // the Sort's, for the tuplesort
    Oid *collations;
    bool *nulls_first;
};

// More series than this are compared by value: keeping ranks costs a
// sorted insertion per run.
constexpr int kMaxRankedSeries = 1024;
constexpr int64 kRankSpacing = int64{1} << 32;
constexpr int64 kMaxRank = int64{1} << 62;  // series appended for ever spread again

Datum *row_values(const TimeMergeState *merge, const Run *run, int row) {
    return run->values + static_cast<size_t>(row) * merge->width;
}

bool *row_nulls(const TimeMergeState *merge, const Run *run, int row) {
    return run->nulls + static_cast<size_t>(row) * merge->width;
}

// <0, 0, >0 as row a comes before, with, or after row b by keys [from, to).
int compare_keys(TimeMergeState *merge, const Datum *a, const bool *a_nulls, const Datum *b,
                 const bool *b_nulls, int from, int to) {
    for (int k = from; k < to; k++) {
        int c = merge->key_columns[k] - 1;
        int result = ApplySortComparator(a[c], a_nulls[c], b[c], b_nulls[c], &merge->keys[k]);
        if (result != 0)
            return result;
    }
    return 0;
}

// <0, 0, >0 as time a comes before, with, or after time b in the Sort's
// order: the first key, a timestamptz never null (read_row checks).
int compare_times(const TimeMergeState *merge, Datum a, Datum b) {
    TimestampTz x = DatumGetTimestampTz(a), y = DatumGetTimestampTz(b);
    int ascending = x < y ? -1 : x > y;
    return merge->descending ? -ascending : ascending;
}

bool time_precedes(const TimeMergeState *merge, Datum a, Datum b) {
    return compare_times(merge, a, b) < 0;
}

void cache_head_time(const TimeMergeState *merge, Run *run) {
    run->head_time =
        DatumGetTimestampTz(row_values(merge, run, run->next)[merge->key_columns[0] - 1]);
}

// Most comparisons end at the time or the series' rank, without reading
// the rows, which are spread over memory.
bool head_precedes(TimeMergeState *merge, const Run *x, const Run *y) {
    int c =
        compare_times(merge, TimestampTzGetDatum(x->head_time), TimestampTzGetDatum(y->head_time));
    if (c != 0)
        return c < 0;
    const Datum *xv = row_values(merge, x, x->next);
    const Datum *yv = row_values(merge, y, y->next);
    const bool *xn = row_nulls(merge, x, x->next);
    const bool *yn = row_nulls(merge, y, y->next);
    if (x->series != nullptr && y->series != nullptr)
        c = x->series->rank < y->series->rank ? -1 : x->series->rank > y->series->rank;
    else
        c = compare_keys(merge, xv, xn, yv, yn, 1, 1 + merge->series_keys);
    if (c == 0)
        c = compare_keys(merge, xv, xn, yv, yn, 1 + merge->series_keys, merge->nkeys);
    return c < 0;
}

// Moves the run at `hole` up to where it belongs.
void sift_up(TimeMergeState *merge, int hole) {
    Run *run = merge->heap[hole];
    while (hole > 0 && head_precedes(merge, run, merge->heap[(hole - 1) / 2])) {
        merge->heap[hole] = merge->heap[(hole - 1) / 2];
        hole = (hole - 1) / 2;
    }
    merge->heap[hole] = run;
}

// Restores the heap after the top run's head moved on. That run's next row
// is mostly later than every other head, so the top is refilled by the
// preceding children down to a leaf, where the run goes and then climbs
// (Floyd's variant): a comparison a level instead of two.
void sift_down_top(TimeMergeState *merge) {
    Run *run = merge->heap[0];
    int hole = 0;
    for (int child = 1; child < merge->heap_size; child = 2 * hole + 1) {
        if (child + 1 < merge->heap_size &&
            head_precedes(merge, merge->heap[child + 1], merge->heap[child]))
            child++;
        merge->heap[hole] = merge->heap[child];
        hole = child;
    }
    merge->heap[hole] = run;
    sift_up(merge, hole);
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
    cache_head_time(merge, merge->open);
    merge->open = nullptr;
    sift_up(merge, i);
}

// ---- Series ranks.

// <0, 0, >0 as a row's series keys come before, with, or after `series`.
int compare_series(TimeMergeState *merge, const Datum *values, const bool *nulls,
                   const Series *series) {
    for (int k = 1; k <= merge->series_keys; k++) {
        int c = merge->key_columns[k] - 1;
        int result = ApplySortComparator(values[c], nulls[c], series->keys[k - 1],
                                         series->nulls[k - 1], &merge->keys[k]);
        if (result != 0)
            return result;
    }
    return 0;
}

// The first ranked series not before the row's.
int ranked_position(TimeMergeState *merge, const Datum *values, const bool *nulls) {
    int low = 0, high = merge->ranked_count;
    while (low < high) {
        int middle = (low + high) / 2;
        if (compare_series(merge, values, nulls, merge->ranked[middle]) > 0)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

void spread_ranks(TimeMergeState *merge) {
    for (int i = 0; i < merge->ranked_count; i++)
        merge->ranked[i]->rank = (i + 1) * kRankSpacing;
}

Series *new_series(TimeMergeState *merge, const Datum *values, const bool *nulls) {
    auto *series = static_cast<Series *>(palloc0(sizeof(Series)));
    series->keys = static_cast<Datum *>(palloc(merge->series_keys * sizeof(Datum)));
    series->nulls = static_cast<bool *>(palloc(merge->series_keys * sizeof(bool)));
    for (int k = 1; k <= merge->series_keys; k++) {
        int c = merge->key_columns[k] - 1;
        series->nulls[k - 1] = nulls[c];
        series->keys[k - 1] =
            nulls[c] ? Datum(0) : datumCopy(values[c], !merge->by_reference[c], merge->lengths[c]);
    }
    return series;
}

// The row's series, ranked among those kept; nullptr when there are too many.
Series *series_of(TimeMergeState *merge, const Datum *values, const bool *nulls) {
    int at = ranked_position(merge, values, nulls);
    if (at < merge->ranked_count && compare_series(merge, values, nulls, merge->ranked[at]) == 0)
        return merge->ranked[at];
    if (merge->ranked_count == kMaxRankedSeries)
        return nullptr;
    Series *series = new_series(merge, values, nulls);
    memmove(&merge->ranked[at + 1], &merge->ranked[at],
            (merge->ranked_count - at) * sizeof(Series *));
    merge->ranked[at] = series;
    merge->ranked_count++;
    int64 before = at > 0 ? merge->ranked[at - 1]->rank : 0;
    int64 after =
        at + 1 < merge->ranked_count ? merge->ranked[at + 1]->rank : before + 2 * kRankSpacing;
    if (after - before < 2 || after > kMaxRank)
        spread_ranks(merge);
    else
        series->rank = before + (after - before) / 2;
    return series;
}

// A series no run refers to is dropped, so that ranks are kept only for
// the series of the runs kept.
void release_series(TimeMergeState *merge, Series *series) {
    if (series == nullptr || --series->runs > 0)
        return;
    int at = 0, high = merge->ranked_count;  // the first ranked not before it
    while (at < high) {
        int middle = (at + high) / 2;
        if (merge->ranked[middle]->rank < series->rank)
            at = middle + 1;
        else
            high = middle;
    }
    Assert(merge->ranked[at] == series);
    memmove(&merge->ranked[at], &merge->ranked[at + 1],
            (merge->ranked_count - at - 1) * sizeof(Series *));
    merge->ranked_count--;
    for (int k = 0; k < merge->series_keys; k++)
        if (!series->nulls[k] && merge->by_reference[merge->key_columns[k + 1] - 1])
            pfree(DatumGetPointer(series->keys[k]));
    pfree(series->keys);
    pfree(series->nulls);
    pfree(series);
}

// Whether the row's series keys are the same bytes as the run's rows'.
bool same_series_keys(TimeMergeState *merge, const Run *run, const Datum *values,
                      const bool *nulls) {
    const Datum *last = row_values(merge, run, run->count - 1);
    const bool *last_nulls = row_nulls(merge, run, run->count - 1);
    for (int k = 1; k <= merge->series_keys; k++) {
        int c = merge->key_columns[k] - 1;
        if (nulls[c] != last_nulls[c] ||
            (!nulls[c] &&
             !datum_image_eq(values[c], last[c], !merge->by_reference[c], merge->lengths[c])))
            return false;
    }
    return true;
}

// ---- Copies of values.

ValueBlock *block_of(Datum value) {
    return *reinterpret_cast<ValueBlock **>(DatumGetPointer(value) - sizeof(ValueBlock *));
}

void free_block(TimeMergeState *merge, ValueBlock *block) {
    merge->kept_bytes -= GetMemoryChunkSpace(block);
    pfree(block);
}

// A copy of by-reference value `value` of column `column`, flattened as
// datumCopy does (an expanded object is copied as its flat form).
Datum copy_value(TimeMergeState *merge, Datum value, int column) {
    bool is_varlena = merge->lengths[column] == -1;
    ExpandedObjectHeader *expanded =
        is_varlena && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(value)) ? DatumGetEOHP(value)
                                                                          : nullptr;
    Size length =
        expanded ? EOH_get_flat_size(expanded) : datumGetSize(value, false, merge->lengths[column]);
    Size need = MAXALIGN(sizeof(ValueBlock *)) + MAXALIGN(length);
    ValueBlock *block = merge->value_block;
    if (block == nullptr || block->size - block->used < need) {
        if (block != nullptr && block->live == 0)
            free_block(merge, block);
        Size size = std::max(kValueBlockSize, need);
        block = static_cast<ValueBlock *>(
            MemoryContextAlloc(merge->rows_context, MAXALIGN(sizeof(ValueBlock)) + size));
        *block = ValueBlock{0, size, 0};
        merge->kept_bytes += GetMemoryChunkSpace(block);
        merge->value_block = block;
    }
    char *at = reinterpret_cast<char *>(block) + MAXALIGN(sizeof(ValueBlock)) + block->used;
    *reinterpret_cast<ValueBlock **>(at) = block;
    char *copy = at + MAXALIGN(sizeof(ValueBlock *));
    if (expanded)
        EOH_flatten_into(expanded, copy, length);
    else
        memcpy(copy, DatumGetPointer(value), length);
    block->used += need;
    block->live++;
    return PointerGetDatum(copy);
}

// Whether `value` is byte for byte `copy` (not an expanded object): the
// bucket row's columns (SELECT *'s meta) are the same for a run's rows.
bool same_image(const TimeMergeState *merge, Datum value, Datum copy, int column) {
    if (merge->lengths[column] == -1 && VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(value)))
        return false;
    Size length = datumGetSize(value, false, merge->lengths[column]);
    return length == datumGetSize(copy, false, merge->lengths[column]) &&
           memcmp(DatumGetPointer(value), DatumGetPointer(copy), length) == 0;
}

// `copy` once more: released as many times as it is shared.
Datum share_value(Datum copy) {
    block_of(copy)->live++;
    return copy;
}

void release_value(TimeMergeState *merge, Datum value) {
    ValueBlock *block = block_of(value);
    if (--block->live == 0 && block != merge->value_block)
        free_block(merge, block);
}

// ---- Runs.

Run *open_run(TimeMergeState *merge, const Datum *values, const bool *nulls, Series *series) {
    MemoryContext caller = MemoryContextSwitchTo(merge->rows_context);
    auto *run = static_cast<Run *>(palloc0(sizeof(Run)));
    run->capacity = 16;
    run->values = static_cast<Datum *>(palloc(run->capacity * merge->width * sizeof(Datum)));
    run->nulls = static_cast<bool *>(palloc(run->capacity * merge->width * sizeof(bool)));
    if (merge->series_keys > 0 && series == nullptr)
        series = series_of(merge, values, nulls);
    MemoryContextSwitchTo(caller);
    run->series = series;
    if (series != nullptr) {
        series->runs++;
        run->shares = true;
        for (int k = 1; k <= merge->series_keys; k++) {
            int c = merge->key_columns[k] - 1;
            run->shares &= nulls[c] || datum_image_eq(values[c], series->keys[k - 1],
                                                      !merge->by_reference[c], merge->lengths[c]);
        }
    }
    merge->kept_bytes += GetMemoryChunkSpace(run->values) + GetMemoryChunkSpace(run->nulls);
    merge->open = run;
    return run;
}

void free_run(TimeMergeState *merge, Run *run) {
    merge->kept_bytes -= GetMemoryChunkSpace(run->values) + GetMemoryChunkSpace(run->nulls);
    release_series(merge, run->series);
    pfree(run->values);
    pfree(run->nulls);
    pfree(run);
}

// Whether a run's column is one of its series' own copies, not the row's.
bool shared_column(const TimeMergeState *merge, const Run *run, int column) {
    return run->shares && merge->series_key_of[column] >= 0;
}

void append_row(TimeMergeState *merge, Run *run, const Datum *values, const bool *nulls) {
    if (run->count == run->capacity) {
        merge->kept_bytes -= GetMemoryChunkSpace(run->values) + GetMemoryChunkSpace(run->nulls);
        run->capacity *= 2;
        run->values = static_cast<Datum *>(
            repalloc(run->values, run->capacity * merge->width * sizeof(Datum)));
        run->nulls =
            static_cast<bool *>(repalloc(run->nulls, run->capacity * merge->width * sizeof(bool)));
        merge->kept_bytes += GetMemoryChunkSpace(run->values) + GetMemoryChunkSpace(run->nulls);
    }
    Datum *to = row_values(merge, run, run->count);
    bool *to_nulls = row_nulls(merge, run, run->count);
    const Datum *before = run->count > 0 ? row_values(merge, run, run->count - 1) : nullptr;
    const bool *before_nulls = run->count > 0 ? row_nulls(merge, run, run->count - 1) : nullptr;
    run->count++;
    memcpy(to_nulls, nulls, merge->width * sizeof(bool));
    for (int c = 0; c < merge->width; c++) {
        if (nulls[c] || !merge->by_reference[c])
            to[c] = values[c];
        else if (shared_column(merge, run, c))
            to[c] = run->series->keys[merge->series_key_of[c]];
        else if (before != nullptr && !before_nulls[c] &&
                 same_image(merge, values[c], before[c], c))
            to[c] = share_value(before[c]);
        else
            to[c] = copy_value(merge, values[c], c);
    }
}

// Whether a row of the run's series comes before the run's last row.
bool row_precedes_last(TimeMergeState *merge, const Run *run, const Datum *values,
                       const bool *nulls) {
    const Datum *last = row_values(merge, run, run->count - 1);
    const bool *last_nulls = row_nulls(merge, run, run->count - 1);
    int time = merge->key_columns[0] - 1;
    int c = compare_times(merge, values[time], last[time]);
    if (c == 0)
        c = compare_keys(merge, values, nulls, last, last_nulls, 1 + merge->series_keys,
                         merge->nkeys);
    return c < 0;
}

// Takes in the loop's next row; false when there are no more.
bool read_row(TimeMergeState *merge) {
    TupleTableSlot *slot = ExecProcNode(merge->loop);
    if (TupIsNull(slot))
        return false;
    slot_getallattrs(slot);
    const Datum *values = slot->tts_values;
    const bool *nulls = slot->tts_isnull;
    int time = merge->key_columns[0] - 1;
    Datum bound = values[merge->bound_column - 1];
    if (nulls[merge->bound_column - 1] || nulls[time] || time_precedes(merge, values[time], bound))
        ereport(ERROR, (errcode(ERRCODE_DATA_CORRUPTED),
                        errmsg("bucket data is corrupt: a measurement's time is outside its "
                               "bucket's control.min and control.max")));
    if (merge->started && time_precedes(merge, bound, merge->frontier))
        elog(ERROR, "tscoll time merge: buckets out of order");
    Run *open = merge->open;
    bool same_series =
        open != nullptr && bound == merge->frontier && same_series_keys(merge, open, values, nulls);
    bool follows = same_series && !row_precedes_last(merge, open, values, nulls);
    merge->frontier = bound;
    merge->started = true;
    // The first rows_needed rows of a run all come before this one.
    if (follows && merge->rows_needed > 0 && open->count >= merge->rows_needed)
        return true;
    if (!follows) {
        Series *series = same_series ? open->series : nullptr;
        close_open_run(merge);
        open = open_run(merge, values, nulls, series);
    }
    append_row(merge, open, values, nulls);
    return true;
}

// ---- Returning rows.

void free_returned(TimeMergeState *merge) {
    for (int i = 0; i < merge->returned_count; i++)
        release_value(merge, merge->returned[i]);
    merge->returned_count = 0;
}

// Returns the first head of the runs and moves past it. The values it
// copied stay until the next row is asked for.
TupleTableSlot *take_first(TimeMergeState *merge) {
    free_returned(merge);
    Run *run = merge->heap[0];
    TupleTableSlot *slot = merge->css.ss.ss_ScanTupleSlot;
    ExecClearTuple(slot);
    const Datum *values = row_values(merge, run, run->next);
    const bool *nulls = row_nulls(merge, run, run->next);
    memcpy(slot->tts_values, values, merge->width * sizeof(Datum));
    memcpy(slot->tts_isnull, nulls, merge->width * sizeof(bool));
    for (int c = 0; c < merge->width; c++)
        if (!nulls[c] && merge->by_reference[c] && !shared_column(merge, run, c))
            merge->returned[merge->returned_count++] = values[c];
    if (++run->next == run->count) {
        free_run(merge, run);
        merge->heap[0] = merge->heap[--merge->heap_size];
    } else {
        cache_head_time(merge, run);
    }
    if (merge->heap_size > 0) {
        sift_down_top(merge);
        // The next row to return, read in when this one's output is made.
        const Run *next = merge->heap[0];
        __builtin_prefetch(row_values(merge, next, next->next));
        __builtin_prefetch(row_values(merge, next, next->next) + merge->width - 1);
        __builtin_prefetch(row_nulls(merge, next, next->next));
    }
    return ExecStoreVirtualTuple(slot);
}

void clear_runs(TimeMergeState *merge) {
    ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    MemoryContextReset(merge->rows_context);
    merge->heap_capacity = 64;
    merge->heap = static_cast<Run **>(
        MemoryContextAlloc(merge->rows_context, merge->heap_capacity * sizeof(Run *)));
    merge->heap_size = 0;
    merge->ranked = static_cast<Series **>(
        MemoryContextAlloc(merge->rows_context, kMaxRankedSeries * sizeof(Series *)));
    merge->ranked_count = 0;
    merge->open = nullptr;
    merge->value_block = nullptr;
    merge->returned_count = 0;
    merge->kept_bytes = 0;
}

// Past work_mem (many buckets share a bound), the rows not yet returned,
// kept and still to come, go to a tuplesort, which spills to disk. Every
// row returned so far comes before all of them.
void sort_the_rest(TimeMergeState *merge) {
    merge->overflow = tuplesort_begin_heap(merge->sort_slot->tts_tupleDescriptor, merge->nkeys,
                                           merge->key_columns, merge->operators, merge->collations,
                                           merge->nulls_first, work_mem, nullptr, TUPLESORT_NONE);
    if (merge->rows_needed > 0)
        tuplesort_set_bound(merge->overflow, merge->rows_needed);
    close_open_run(merge);
    TupleTableSlot *slot = merge->css.ss.ss_ScanTupleSlot;
    for (int i = 0; i < merge->heap_size; i++) {
        const Run *run = merge->heap[i];
        for (int r = run->next; r < run->count; r++) {
            ExecClearTuple(slot);
            memcpy(slot->tts_values, row_values(merge, run, r), merge->width * sizeof(Datum));
            memcpy(slot->tts_isnull, row_nulls(merge, run, r), merge->width * sizeof(bool));
            tuplesort_puttupleslot(merge->overflow, ExecStoreVirtualTuple(slot));
        }
    }
    clear_runs(merge);
    for (;;) {
        CHECK_FOR_INTERRUPTS();
        TupleTableSlot *row = ExecProcNode(merge->loop);
        if (TupIsNull(row))
            break;
        tuplesort_puttupleslot(merge->overflow, row);
    }
    tuplesort_performsort(merge->overflow);
    merge->loop_done = true;
    merge->overflowed = true;
}

// Whether the first head may be returned: it precedes the bound of the
// last bucket read, so no row to come precedes it. With the time as the
// Sort's only key, a head at the bound goes too (the rows to come are no
// later, and ties are in no order), so that a LIMIT 1 of the latest row
// needs no second bucket.
bool head_may_go(const TimeMergeState *merge, Datum time) {
    if (merge->nkeys == 1)
        return !time_precedes(merge, merge->frontier, time);
    return time_precedes(merge, time, merge->frontier);
}

TupleTableSlot *next_row(ScanState *node) {
    auto *merge = reinterpret_cast<TimeMergeState *>(node);
    if (merge->overflow != nullptr) {
        if (tuplesort_gettupleslot(merge->overflow, true, false, merge->sort_slot, nullptr))
            return store_virtual(merge->css.ss.ss_ScanTupleSlot, merge->sort_slot);
        return ExecClearTuple(merge->css.ss.ss_ScanTupleSlot);
    }
    for (;;) {
        // Under a LIMIT, an open run holding the rows it keeps, alone, goes
        // to the heap now if its head may go: a LIMIT 1 of the latest row
        // then returns it without reading the next bucket.
        Run *open = merge->open;
        if (merge->heap_size == 0 && open != nullptr && merge->rows_needed > 0 &&
            open->count >= merge->rows_needed &&
            head_may_go(merge, row_values(merge, open, open->next)[merge->key_columns[0] - 1]))
            close_open_run(merge);
        if (merge->heap_size > 0) {
            Datum time = TimestampTzGetDatum(merge->heap[0]->head_time);
            if (merge->loop_done || head_may_go(merge, time))
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
    merge->series_keys = intVal(list_nth(plan->custom_private, 6));
    merge->descending =
        merge->operators[0] != lookup_type_cache(TIMESTAMPTZOID, TYPECACHE_LT_OPR)->lt_opr;
    TupleDesc desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
    merge->width = desc->natts;
    merge->by_reference = static_cast<bool *>(palloc(merge->width * sizeof(bool)));
    merge->lengths = static_cast<int16 *>(palloc(merge->width * sizeof(int16)));
    merge->series_key_of = static_cast<int *>(palloc(merge->width * sizeof(int)));
    for (int c = 0; c < merge->width; c++) {
        merge->by_reference[c] = !TupleDescAttr(desc, c)->attbyval;
        merge->lengths[c] = TupleDescAttr(desc, c)->attlen;
        merge->series_key_of[c] = -1;
    }
    for (int k = merge->series_keys; k >= 1; k--)
        merge->series_key_of[merge->key_columns[k] - 1] = k - 1;
    merge->returned = static_cast<Datum *>(palloc(merge->width * sizeof(Datum)));
    merge->sort_slot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
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
    ExecClearTuple(merge->sort_slot);
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
    auto *bound = list_nth_node(TargetEntry, plan->custom_scan_tlist,
                                intVal(list_nth(plan->custom_private, 4)) - 1);
    ExplainPropertyText("Buckets In Order Of",
                        deparse_expression(reinterpret_cast<Node *>(bound->expr), context,
                                           list_length(es->rtable) > 1, false),
                        es);
}

Node *create_merge_state(CustomScan *plan);

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

}  // namespace

namespace tscoll::pg::time_merge {

const CustomScanMethods kMergeMethods = {"TscollTimeMerge", create_merge_state};

TupleTableSlot *store_virtual(TupleTableSlot *to, TupleTableSlot *from) {
    ExecClearTuple(to);
    slot_getallattrs(from);
    int width = to->tts_tupleDescriptor->natts;
    memcpy(to->tts_values, from->tts_values, width * sizeof(Datum));
    memcpy(to->tts_isnull, from->tts_isnull, width * sizeof(bool));
    return ExecStoreVirtualTuple(to);
}

}  // namespace tscoll::pg::time_merge
