// The unpack scan (doc/REFERENCE.md §6, Custom Scan (TscollUnpack);
// doc/ARCHITECTURE.md, Reading).
//
// A collection's view reads each bucket through a lateral call of _unpack,
// which plan/read_plan.cpp may have replaced by _unpack_fields, _unpack_groups
// or _bucket_slots. PostgreSQL plans each as a Function Scan, which copies
// every call's rows into a tuplestore before returning the first. Once the
// plan is made, each such Function Scan becomes this custom scan: it calls
// the same code (read/row_sink.hpp) for the bucket of each rescan and returns
// the rows from memory. EXPLAIN shows what it decodes and, with ANALYZE,
// how many buckets were read and how many of the table's were pruned.
//
// This file holds no C++ object with a destructor outside guarded() (see
// guard.hpp): the executor callbacks call PostgreSQL directly.
#include "pg/nodes/unpack_scan.hpp"

extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
}

#include <initializer_list>

#include "pg/guard.hpp"
#include "pg/node_trees.hpp"
#include "pg/read/row_sink.hpp"
#include "pg/read/unpacking.hpp"
#include "core/float8_aggregate.hpp"
#include "pg/read/unpack_call.hpp"

namespace {

using namespace tscoll::pg::unpack_call;

using RowsFunction = void (*)(FunctionCallInfo, tscoll::pg::RowSink &);

struct Unpacking {
    const char *symbol;  // the C function of the SQL function
    RowsFunction rows;
};

const Unpacking kUnpackings[] = {
    {"tscoll_unpack", tscoll::pg::unpack_rows},
    {"tscoll_unpack_fields", tscoll::pg::unpack_fields_rows},
    {"tscoll_unpack_groups", tscoll::pg::unpack_groups_rows},
    {"tscoll_bucket_slots", tscoll::pg::bucket_slots_rows},
    {"tscoll_bucket_ends", tscoll::pg::bucket_ends_rows},
};
constexpr int kUnpackingCount = sizeof(kUnpackings) / sizeof(kUnpackings[0]);

// The index in kUnpackings of a C function of the tscoll schema, else -1.
int unpacking_of(Oid funcid) {
    Oid ns = get_func_namespace(funcid);
    const char *ns_name = OidIsValid(ns) ? get_namespace_name(ns) : nullptr;
    if (ns_name == nullptr || strcmp(ns_name, "tscoll") != 0)
        return -1;
    HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
    if (!HeapTupleIsValid(tuple))
        return -1;
    int result = -1;
    if (reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple))->prolang == ClanguageId) {
        bool isnull = false;
        Datum src = SysCacheGetAttr(PROCOID, tuple, Anum_pg_proc_prosrc, &isnull);
        const char *symbol = isnull ? "" : TextDatumGetCString(src);
        for (int i = 0; i < kUnpackingCount; i++)
            if (strcmp(symbol, kUnpackings[i].symbol) == 0)
                result = i;
    }
    ReleaseSysCache(tuple);
    return result;
}

// ---------------------------------------------------------------------------
// Execution.

struct UnpackScanState {
    CustomScanState css;
    RowsFunction rows;
    FmgrInfo flinfo;
    FunctionCallInfo fcinfo;
    List *args;                    // ExprState of each argument
    MemoryContext bucket_context;  // the current bucket's rows and arguments
    Datum *values;                 // rows × columns
    bool *nulls;
    uint64 row_count;
    uint64 capacity;
    uint64 next_row;
    bool unpacked;  // the current bucket's rows are made
    tscoll::pg::FirstRows first;
};

// Appends the rows to the scan's buffer.
class BufferSink final : public tscoll::pg::RowSink {
  public:
    explicit BufferSink(UnpackScanState *scan) : scan_(scan) {}

    TupleDesc desc() const override { return scan_->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor; }

    void put(const Datum *values, const bool *nulls) override {
        int width = desc()->natts;
        if (scan_->row_count == scan_->capacity)
            grow(width);
        memcpy(scan_->values + scan_->row_count * width, values, width * sizeof(Datum));
        memcpy(scan_->nulls + scan_->row_count * width, nulls, width * sizeof(bool));
        scan_->row_count++;
    }

  private:
    void grow(int width) {
        uint64 capacity = scan_->capacity == 0 ? 64 : scan_->capacity * 2;
        tscoll::pg::pg_call([&] {
            Size values = capacity * width * sizeof(Datum);
            Size nulls = capacity * width * sizeof(bool);
            if (scan_->values == nullptr) {
                scan_->values =
                    static_cast<Datum *>(MemoryContextAllocHuge(scan_->bucket_context, values));
                scan_->nulls =
                    static_cast<bool *>(MemoryContextAllocHuge(scan_->bucket_context, nulls));
            } else {
                scan_->values = static_cast<Datum *>(repalloc_huge(scan_->values, values));
                scan_->nulls = static_cast<bool *>(repalloc_huge(scan_->nulls, nulls));
            }
        });
        scan_->capacity = capacity;
    }

    UnpackScanState *scan_;
};

constexpr Size kBucketContextSize = 1024 * 1024;

void begin_scan(CustomScanState *node, EState *estate, int eflags) {
    auto *scan = reinterpret_cast<UnpackScanState *>(node);
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    int nargs = list_length(plan->custom_exprs);
    scan->args = ExecInitExprList(plan->custom_exprs, &node->ss.ps);
    fmgr_info(static_cast<Oid>(intVal(list_nth(plan->custom_private, kFunction))), &scan->flinfo);
    scan->fcinfo = static_cast<FunctionCallInfo>(palloc0(SizeForFunctionCallInfo(nargs)));
    InitFunctionCallInfoData(*scan->fcinfo, &scan->flinfo, nargs,
                             static_cast<Oid>(intVal(list_nth(plan->custom_private, kCollation))),
                             nullptr, nullptr);
    // A bucket's rows and documents take up to a few hundred kB: a first
    // block that size stays across buckets. Reset down to 8 kB, the context
    // gave its larger blocks back to malloc at every bucket, which handed
    // them back to the kernel, and their pages faulted in again for the
    // next bucket (a fifth of a SELECT * of 12 buckets).
    scan->bucket_context =
        AllocSetContextCreate(CurrentMemoryContext, "tscoll unpack scan", kBucketContextSize,
                              kBucketContextSize, ALLOCSET_DEFAULT_MAXSIZE);
    scan->first.count = intVal(list_nth(plan->custom_private, kFirstCount));
    scan->first.latest = intVal(list_nth(plan->custom_private, kFirstLatest)) != 0;
}

// Makes the rows of the bucket whose values the arguments now read.
void unpack_bucket(UnpackScanState *scan) {
    ExecClearTuple(scan->css.ss.ss_ScanTupleSlot);
    if (scan->css.ss.ps.ps_ResultTupleSlot != nullptr)
        ExecClearTuple(scan->css.ss.ps.ps_ResultTupleSlot);
    MemoryContextReset(scan->bucket_context);
    scan->values = nullptr;
    scan->nulls = nullptr;
    scan->row_count = scan->capacity = scan->next_row = 0;
    MemoryContext caller = MemoryContextSwitchTo(scan->bucket_context);
    ExprContext *econtext = scan->css.ss.ps.ps_ExprContext;
    int i = 0;
    ListCell *lc;
    foreach (lc, scan->args) {
        NullableDatum &arg = scan->fcinfo->args[i++];
        arg.value = ExecEvalExpr(static_cast<ExprState *>(lfirst(lc)), econtext, &arg.isnull);
    }
    tscoll::pg::guarded([scan] {
        BufferSink sink(scan);
        sink.first = scan->first;
        scan->rows(scan->fcinfo, sink);
    });
    MemoryContextSwitchTo(caller);
}

TupleTableSlot *next_row(ScanState *node) {
    auto *scan = reinterpret_cast<UnpackScanState *>(node);
    if (!scan->unpacked) {
        unpack_bucket(scan);
        scan->unpacked = true;
    }
    TupleTableSlot *slot = node->ss_ScanTupleSlot;
    ExecClearTuple(slot);
    if (scan->next_row >= scan->row_count)
        return slot;
    int width = slot->tts_tupleDescriptor->natts;
    memcpy(slot->tts_values, scan->values + scan->next_row * width, width * sizeof(Datum));
    memcpy(slot->tts_isnull, scan->nulls + scan->next_row * width, width * sizeof(bool));
    scan->next_row++;
    return ExecStoreVirtualTuple(slot);
}

bool recheck_row(ScanState *, TupleTableSlot *) {
    return true;
}

TupleTableSlot *exec_scan(CustomScanState *node) {
    return ExecScan(&node->ss, next_row, recheck_row);
}

void rescan(CustomScanState *node) {
    reinterpret_cast<UnpackScanState *>(node)->unpacked = false;
    ExecScanReScan(&node->ss);
}

void end_scan(CustomScanState *node) {
    auto *scan = reinterpret_cast<UnpackScanState *>(node);
    ExecClearTuple(node->ss.ss_ScanTupleSlot);
    if (node->ss.ps.ps_ResultTupleSlot != nullptr)
        ExecClearTuple(node->ss.ps.ps_ResultTupleSlot);
    MemoryContextDelete(scan->bucket_context);
}

// ---------------------------------------------------------------------------
// EXPLAIN.

// The rows of a relation visible to the active snapshot; -1 when unknown.
int64 count_rows(Oid relid) {
    if (!OidIsValid(relid) || !ActiveSnapshotSet())
        return -1;
    Relation rel = table_open(relid, AccessShareLock);
    TableScanDesc rows = table_beginscan(rel, GetActiveSnapshot(), 0, nullptr);
    TupleTableSlot *slot = table_slot_create(rel, nullptr);
    int64 n = 0;
    while (table_scan_getnextslot(rows, ForwardScanDirection, slot))
        n++;
    ExecDropSingleTupleTableSlot(slot);
    table_endscan(rows);
    table_close(rel, AccessShareLock);
    return n;
}

// The value of a constant text argument; nullptr otherwise.
const char *text_argument(List *args, int n) {
    Node *arg = n < list_length(args) ? static_cast<Node *>(list_nth(args, n)) : nullptr;
    if (arg == nullptr || !IsA(arg, Const) || castNode(Const, arg)->constisnull ||
        castNode(Const, arg)->consttype != TEXTOID)
        return nullptr;
    return TextDatumGetCString(castNode(Const, arg)->constvalue);
}

// The elements of a constant text[] argument, as C strings; NIL otherwise.
List *text_array_strings(List *args, int n) {
    Node *arg = n < list_length(args) ? static_cast<Node *>(list_nth(args, n)) : nullptr;
    if (arg == nullptr || !IsA(arg, Const) || castNode(Const, arg)->constisnull ||
        castNode(Const, arg)->consttype != TEXTARRAYOID)
        return NIL;
    Datum *items = nullptr;
    bool *nulls = nullptr;
    int count = 0;
    deconstruct_array(DatumGetArrayTypeP(castNode(Const, arg)->constvalue), TEXTOID, -1, false,
                      TYPALIGN_INT, &items, &nulls, &count);
    List *result = NIL;
    for (int i = 0; i < count; i++)
        if (!nulls[i])
            result = lappend(result, TextDatumGetCString(items[i]));
    return result;
}

// The time field (argument 3), then the fields of "<letter><name>" specs
// (count(*), "n", reads none), each once.
List *decoded_fields(List *args, List *specs) {
    const char *time_field = text_argument(args, kTimeField);
    List *names = time_field != nullptr ? list_make1(const_cast<char *>(time_field)) : NIL;
    ListCell *lc;
    foreach (lc, specs) {
        char *name = const_cast<char *>(
            tscoll::pg::unpack_call::spec_field(static_cast<char *>(lfirst(lc))));
        bool seen = *name == '\0';
        ListCell *n;
        foreach (n, names)
            seen = seen || strcmp(static_cast<char *>(lfirst(n)), name) == 0;
        if (!seen)
            names = lappend(names, name);
    }
    return names;
}

// _unpack_groups' aggregates, "<Float8Aggregate letter><field>", as SQL.
List *aggregate_texts(List *specs) {
    List *result = NIL;
    ListCell *lc;
    foreach (lc, specs) {
        const char *spec = static_cast<char *>(lfirst(lc));
        const char *field = tscoll::pg::unpack_call::spec_field(spec);
        auto kind =
            static_cast<tscoll::Float8Aggregate>(tscoll::pg::unpack_call::aggregate_letter(spec));
        result = lappend(result, kind == tscoll::Float8Aggregate::Rows
                                     ? pstrdup("count(*)")
                                     : psprintf("%s(%s)", tscoll::aggregate_name(kind), field));
    }
    return result;
}

// The prefilters of _unpack or _unpack_fields as conditions: argument
// `first`, "<strategy digit><field>", and the next, their float8 bounds.
List *prefilter_texts(List *args, int first) {
    List *specs = text_array_strings(args, first);
    Node *arg =
        list_length(args) > first + 1 ? static_cast<Node *>(list_nth(args, first + 1)) : nullptr;
    if (specs == NIL || arg == nullptr || !IsA(arg, Const) || castNode(Const, arg)->constisnull)
        return NIL;
    Datum *bounds = nullptr;
    bool *nulls = nullptr;
    int count = 0;
    deconstruct_array(DatumGetArrayTypeP(castNode(Const, arg)->constvalue), FLOAT8OID, 8,
                      FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &bounds, &nulls, &count);
    static const char *const kOperators[] = {"<", "<=", "=", ">=", ">"};
    List *result = NIL;
    int i = 0;
    ListCell *lc;
    foreach (lc, specs) {
        const char *spec = static_cast<char *>(lfirst(lc));
        if (i >= count || nulls[i] || spec[0] < '1' || spec[0] > '5')
            break;
        result =
            lappend(result, psprintf("%s %s %s", spec + 1, kOperators[spec[0] - '1'],
                                     DatumGetCString(DirectFunctionCall1(float8out, bounds[i++]))));
    }
    return result;
}

// The time bounds of arguments first .. first + 3 (lower, lower_strict,
// upper, upper_strict) as conditions; NIL when there are none.
List *window_texts(List *args, int first, List *deparse_context) {
    const char *time_field = text_argument(args, kTimeField);
    if (time_field == nullptr)
        time_field = "time";
    List *result = NIL;
    if (first + 3 < list_length(args) && equal(list_nth(args, first), list_nth(args, first + 2)) &&
        equal(list_nth(args, first + 1), list_nth(args, first + 3)) &&
        equal(list_nth(args, first + 1), makeBoolConst(false, false))) {
        char *bound = deparse_expression(static_cast<Node *>(list_nth(args, first)),
                                         deparse_context, true, false);
        return list_make1(psprintf("%s = %s", time_field, bound));
    }
    for (int side : {first, first + 2}) {
        Node *strict =
            side + 1 < list_length(args) ? static_cast<Node *>(list_nth(args, side + 1)) : nullptr;
        if (strict == nullptr || !IsA(strict, Const) || castNode(Const, strict)->constisnull)
            continue;
        bool is_strict = DatumGetBool(castNode(Const, strict)->constvalue);
        const char *op = side == first ? (is_strict ? ">" : ">=") : (is_strict ? "<" : "<=");
        char *bound = deparse_expression(static_cast<Node *>(list_nth(args, side)), deparse_context,
                                         true, false);
        result = lappend(result, psprintf("%s %s %s", time_field, op, bound));
    }
    return result;
}

// What the scan decodes of each bucket, and how.
void explain_unpacking(CustomScan *plan, List *ancestors, ExplainState *es) {
    const char *symbol = kUnpackings[intVal(list_nth(plan->custom_private, kUnpacking))].symbol;
    List *args = plan->custom_exprs;
    List *context = set_deparse_context_plan(es->deparse_cxt, &plan->scan.plan, ancestors);
    if (strcmp(symbol, "tscoll_unpack") == 0) {
        ExplainPropertyText("Decoded Fields", "all", es);
        if (List *window = window_texts(args, kUnpackWindow, context))
            ExplainPropertyList("Time Window", window, es);
        if (List *filters = prefilter_texts(args, kUnpackFilters))
            ExplainPropertyList("Measurement Filter", filters, es);
    } else if (strcmp(symbol, "tscoll_unpack_fields") == 0) {
        ExplainPropertyList("Decoded Fields",
                            decoded_fields(args, text_array_strings(args, kFields)), es);
        if (List *window = window_texts(args, kFieldsWindow, context))
            ExplainPropertyList("Time Window", window, es);
        if (List *filters = prefilter_texts(args, kFilters))
            ExplainPropertyList("Measurement Filter", filters, es);
    } else if (strcmp(symbol, "tscoll_unpack_groups") == 0) {
        List *specs = text_array_strings(args, kAggregates);
        ExplainPropertyList("Decoded Fields", decoded_fields(args, specs), es);
        ExplainPropertyList("Partial Aggregates", aggregate_texts(specs), es);
        const char *unit = text_argument(args, kUnit);
        Node *stride = list_length(args) > kGroupsOrigin
                           ? static_cast<Node *>(list_nth(args, kGroupsStride))
                           : nullptr;
        if (stride != nullptr && !(IsA(stride, Const) && castNode(Const, stride)->constisnull))
            ExplainPropertyText(
                "Time Group",
                psprintf("date_bin(%s, %s, %s)%s", deparse_expression(stride, context, true, false),
                         text_argument(args, kTimeField) ? text_argument(args, kTimeField) : "time",
                         deparse_expression(static_cast<Node *>(list_nth(args, kGroupsOrigin)),
                                            context, true, false),
                         unit != nullptr ? ", the query's expression applied to each" : ""),
                es);
        else if (unit != nullptr)
            ExplainPropertyText(
                "Time Group",
                list_length(args) > kGroupsZone
                    ? psprintf("%s in time zone %s", unit,
                               deparse_expression(static_cast<Node *>(list_nth(args, kGroupsZone)),
                                                  context, true, false))
                    : unit,
                es);
        if (List *window = window_texts(args, kGroupsWindow, context))
            ExplainPropertyList("Time Window", window, es);
    } else if (strcmp(symbol, "tscoll_bucket_ends") == 0) {
        const char *time_field = text_argument(args, 2);
        ExplainPropertyText("Decoded Fields", time_field != nullptr ? time_field : "time", es);
        ExplainPropertyText("Rows", "earliest and latest of each bucket", es);
    } else {
        ExplainPropertyText("Decoded Fields", "none (control.count)", es);
    }
    if (int count = intVal(list_nth(plan->custom_private, kFirstCount)))
        ExplainPropertyText(
            "Rows Per Bucket",
            psprintf("the %d %s and their ties", count,
                     intVal(list_nth(plan->custom_private, kFirstLatest)) ? "latest" : "earliest"),
            es);
    if (es->verbose) {
        FuncExpr *call = makeFuncExpr(
            static_cast<Oid>(intVal(list_nth(plan->custom_private, kFunction))), RECORDOID, args,
            InvalidOid, static_cast<Oid>(intVal(list_nth(plan->custom_private, kCollation))),
            COERCE_EXPLICIT_CALL);
        ExplainPropertyText(
            "Function Call",
            deparse_expression(reinterpret_cast<Node *>(call), context, true, false), es);
    }
}

void explain_scan(CustomScanState *node, List *ancestors, ExplainState *es) {
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    explain_unpacking(plan, ancestors, es);
    Instrumentation *instrument = node->ss.ps.instrument;
    if (!es->analyze || instrument == nullptr)
        return;
    // Each loop is one bucket, in the leader or in parallel workers.
    auto read = static_cast<int64>(instrument->nloops);
    int64 total =
        count_rows(static_cast<Oid>(intVal(list_nth(plan->custom_private, kBucketTable))));
    bool pruned_known = total >= read;
    if (es->format == EXPLAIN_FORMAT_TEXT) {
        ExplainPropertyText("Buckets",
                            pruned_known
                                ? psprintf("read=%lld pruned=%lld", static_cast<long long>(read),
                                           static_cast<long long>(total - read))
                                : psprintf("read=%lld", static_cast<long long>(read)),
                            es);
        return;
    }
    ExplainPropertyInteger("Buckets Read", nullptr, read, es);
    if (pruned_known)
        ExplainPropertyInteger("Buckets Pruned", nullptr, total - read, es);
}

Node *create_scan_state(CustomScan *plan);

const CustomScanMethods kScanMethods = {"TscollUnpack", create_scan_state};

const CustomExecMethods kExecMethods = {
    "TscollUnpack", begin_scan, exec_scan, end_scan, rescan,  nullptr,      nullptr,
    nullptr,        nullptr,    nullptr,   nullptr,  nullptr, explain_scan,
};

Node *create_scan_state(CustomScan *plan) {
    auto *scan = static_cast<UnpackScanState *>(palloc0(sizeof(UnpackScanState)));
    NodeSetTag(scan, T_CustomScanState);
    scan->css.methods = &kExecMethods;
    scan->rows = kUnpackings[intVal(list_nth(plan->custom_private, kUnpacking))].rows;
    return reinterpret_cast<Node *>(scan);
}

// ---------------------------------------------------------------------------
// Planning: after PostgreSQL has made the plan.

// The relation that output column `resno` of `plan` reads, following the
// columns nodes pass on from their inputs; InvalidOid when it is computed.
Oid column_source(Plan *plan, AttrNumber resno, List *rtable) {
    while (plan != nullptr && resno >= 1 && resno <= list_length(plan->targetlist)) {
        Expr *expr = list_nth_node(TargetEntry, plan->targetlist, resno - 1)->expr;
        if (!IsA(expr, Var))
            return InvalidOid;
        auto *var = reinterpret_cast<Var *>(expr);
        resno = var->varattno;
        if (var->varno == OUTER_VAR) {
            plan = outerPlan(plan);
        } else if (var->varno == INNER_VAR) {
            plan = innerPlan(plan);
        } else if (IS_SPECIAL_VARNO(var->varno)) {
            return InvalidOid;
        } else {
            RangeTblEntry *rte = rt_fetch(var->varno, rtable);
            return rte->rtekind == RTE_RELATION ? rte->relid : InvalidOid;
        }
    }
    return InvalidOid;
}

// The bucket table whose rows the call reads: its first argument is a
// parameter that a Nested Loop above sets from a column of its outer side.
Oid bucket_source(FuncExpr *call, List *ancestors, List *rtable) {
    Node *first = call->args != NIL ? static_cast<Node *>(linitial(call->args)) : nullptr;
    if (first == nullptr || !IsA(first, Param) || castNode(Param, first)->paramkind != PARAM_EXEC)
        return InvalidOid;
    int paramid = castNode(Param, first)->paramid;
    ListCell *a;
    foreach (a, ancestors) {
        if (!IsA(lfirst(a), NestLoop))
            continue;
        auto *loop = static_cast<NestLoop *>(lfirst(a));
        ListCell *p;
        foreach (p, loop->nestParams) {
            auto *param = lfirst_node(NestLoopParam, p);
            if (param->paramno == paramid && IsA(param->paramval, Var))
                return column_source(outerPlan(loop), param->paramval->varattno, rtable);
        }
    }
    return InvalidOid;
}

struct ScanVars {
    Index scanrelid;
    bool whole_row;  // a reference to the whole function row: not redirected
};

// Points the Function Scan's column references at the custom scan's tuple.
Node *to_scan_tuple(Node *node, ScanVars *context) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Var) && castNode(Var, node)->varno == static_cast<int>(context->scanrelid) &&
        castNode(Var, node)->varlevelsup == 0) {
        Var *var = tscoll::pg::copy_node(castNode(Var, node));
        context->whole_row = context->whole_row || var->varattno <= 0;
        var->varno = INDEX_VAR;
        return reinterpret_cast<Node *>(var);
    }
    return expression_tree_mutator(node, tscoll::pg::mutator(to_scan_tuple), context);
}

// The columns of the function's rows, as ExecInitFunctionScan finds them.
TupleDesc result_columns(RangeTblFunction *function) {
    Oid type = InvalidOid;
    TupleDesc desc = nullptr;
    switch (get_expr_result_type(function->funcexpr, &type, &desc)) {
        case TYPEFUNC_COMPOSITE:
            return desc;
        case TYPEFUNC_RECORD:
            if (function->funccolnames == NIL)
                return nullptr;
            return BuildDescFromLists(function->funccolnames, function->funccoltypes,
                                      function->funccoltypmods, function->funccolcollations);
        default:
            return nullptr;
    }
}

// The unpack scan for `scan`, or nullptr when it calls something else.
Plan *unpack_scan(FunctionScan *scan, List *ancestors, List *rtable) {
    if (scan->funcordinality || list_length(scan->functions) != 1)
        return nullptr;
    auto *function = linitial_node(RangeTblFunction, scan->functions);
    if (!IsA(function->funcexpr, FuncExpr))
        return nullptr;
    auto *call = castNode(FuncExpr, function->funcexpr);
    int unpacking = unpacking_of(call->funcid);
    TupleDesc columns = unpacking < 0 ? nullptr : result_columns(function);
    if (columns == nullptr)
        return nullptr;
    Index rti = scan->scan.scanrelid;
    ScanVars vars = {rti, false};
    List *targetlist = reinterpret_cast<List *>(
        to_scan_tuple(reinterpret_cast<Node *>(scan->scan.plan.targetlist), &vars));
    List *qual = reinterpret_cast<List *>(
        to_scan_tuple(reinterpret_cast<Node *>(scan->scan.plan.qual), &vars));
    if (vars.whole_row)
        return nullptr;
    List *scan_tlist = NIL;
    for (int i = 0; i < columns->natts; i++) {
        Form_pg_attribute a = TupleDescAttr(columns, i);
        Var *column = makeVar(rti, i + 1, a->atttypid, a->atttypmod, a->attcollation, 0);
        scan_tlist = lappend(scan_tlist, makeTargetEntry(reinterpret_cast<Expr *>(column), i + 1,
                                                         pstrdup(NameStr(a->attname)), false));
    }
    CustomScan *custom = makeNode(CustomScan);
    custom->scan.plan = scan->scan.plan;  // costs, parameters, parallel safety
    custom->scan.plan.type = T_CustomScan;
    custom->scan.plan.targetlist = targetlist;
    custom->scan.plan.qual = qual;
    custom->scan.scanrelid = 0;
    custom->custom_exprs = call->args;
    custom->custom_private =
        list_make4(makeInteger(unpacking), makeInteger(static_cast<int>(call->funcid)),
                   makeInteger(static_cast<int>(call->inputcollid)),
                   makeInteger(static_cast<int>(bucket_source(call, ancestors, rtable))));
    // Each bucket's first rows only (keep_first_rows): none, all wanted.
    custom->custom_private = lappend(custom->custom_private, makeInteger(0));
    custom->custom_private = lappend(custom->custom_private, makeInteger(0));
    custom->custom_scan_tlist = scan_tlist;
    custom->custom_relids = bms_make_singleton(static_cast<int>(rti));
    custom->methods = &kScanMethods;
    return &custom->scan.plan;
}

// `plan` with its Function Scans of unpacking functions replaced;
// `ancestors` are the nodes above it, nearest first.
Plan *replace_scans(Plan *plan, List *ancestors, List *rtable) {
    if (plan == nullptr)
        return nullptr;
    if (IsA(plan, FunctionScan)) {
        Plan *custom = unpack_scan(reinterpret_cast<FunctionScan *>(plan), ancestors, rtable);
        return custom != nullptr ? custom : plan;
    }
    List *inside = lcons(plan, list_copy(ancestors));
    tscoll::pg::for_each_child(plan, [&](Plan *&child, tscoll::pg::ChildSide) {
        child = replace_scans(child, inside, rtable);
    });
    list_free(inside);
    return plan;
}

}  // namespace

namespace tscoll::pg {

void register_unpack_scan() {
    RegisterCustomScanMethods(&kScanMethods);
}

bool use_unpack_scans(PlannedStmt *stmt, int cursor_options) {
    // The scan reads forward only, and has no row of its own to recheck:
    // PostgreSQL chose the plan for a Function Scan, which can scroll and
    // returns its row mark's copy when a concurrent update is rechecked.
    if (stmt->commandType != CMD_SELECT || stmt->hasModifyingCTE || stmt->rowMarks != NIL ||
        (cursor_options & CURSOR_OPT_SCROLL) != 0)
        return false;
    stmt->planTree = replace_scans(stmt->planTree, NIL, stmt->rtable);
    ListCell *lc;
    foreach (lc, stmt->subplans)
        lfirst(lc) = replace_scans(static_cast<Plan *>(lfirst(lc)), NIL, stmt->rtable);
    return true;
}

Oid measurement_unpack_source(const Plan *plan) {
    if (plan == nullptr || !IsA(plan, CustomScan) ||
        reinterpret_cast<const CustomScan *>(plan)->methods != &kScanMethods)
        return InvalidOid;
    List *info = reinterpret_cast<const CustomScan *>(plan)->custom_private;
    const char *symbol = kUnpackings[intVal(list_nth(info, kUnpacking))].symbol;
    if (strcmp(symbol, "tscoll_unpack") != 0 && strcmp(symbol, "tscoll_unpack_fields") != 0)
        return InvalidOid;
    return static_cast<Oid>(intVal(list_nth(info, kBucketTable)));
}

bool keep_first_rows(Plan *plan, int count, bool latest) {
    if (!OidIsValid(measurement_unpack_source(plan)) || plan->qual != NIL)
        return false;
    auto *scan = reinterpret_cast<CustomScan *>(plan);
    const char *symbol = kUnpackings[intVal(list_nth(scan->custom_private, kUnpacking))].symbol;
    // Filters would drop rows before the first ones are counted.
    if (strcmp(symbol, "tscoll_unpack_fields") == 0 &&
        list_length(scan->custom_exprs) >= kFieldsArgsWithFilters)
        return false;
    intVal(list_nth(scan->custom_private, kFirstCount)) = count;
    intVal(list_nth(scan->custom_private, kFirstLatest)) = latest ? 1 : 0;
    return true;
}

}  // namespace tscoll::pg
