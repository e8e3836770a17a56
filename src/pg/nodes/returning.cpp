#include "pg/nodes/returning.hpp"

extern "C" {
#include "access/tupdesc.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/measurement.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/node_trees.hpp"
#include "pg/pg_time.hpp"

namespace tscoll::pg {

struct ReturnedMeasurements {
    Tuplestorestate *store;
    TupleDesc desc;          // the view's: time, [meta,] doc
    const char *time_field;  // palloc'd with the store
    const char *meta_field;  // nullptr when the collection has none
};

namespace {

enum BucketColumn { kId = 1, kMeta, kControl, kData };

// The view's row type: time, [meta,] doc.
TupleDesc view_desc(bool with_meta) {
    TupleDesc desc = CreateTemplateTupleDesc(with_meta ? 3 : 2);
    AttrNumber column = 1;
    TupleDescInitEntry(desc, column++, "time", TIMESTAMPTZOID, -1, 0);
    if (with_meta)
        TupleDescInitEntry(desc, column++, "meta", JSONBOID, -1, 0);
    TupleDescInitEntry(desc, column, "doc", JSONBOID, -1, 0);
    return desc;
}

std::vector<Value> measurements_of(TupleTableSlot *bucket) {
    bool id_null = false, data_null = false;
    Datum id = pg_call([&] { return slot_getattr(bucket, kId, &id_null); });
    Datum data = pg_call([&] { return slot_getattr(bucket, kData, &data_null); });
    if (id_null || data_null)
        return {};
    bytea *raw = pg_call([&] { return DatumGetByteaPP(data); });
    return decode_bucket(*reinterpret_cast<const ObjectId *>(DatumGetPointer(id)), raw)
        .measurements();
}

std::optional<Value> meta_of(TupleTableSlot *bucket) {
    bool isnull = false;
    Datum meta = pg_call([&] { return slot_getattr(bucket, kMeta, &isnull); });
    if (isnull)
        return std::nullopt;
    return jsonb_to_value(pg_call([&] { return DatumGetJsonbP(meta); }));
}

// Which of `all` are not in `rest`: `rest` is `all` without some of them,
// in the same order (tscoll._remove_measurements keeps the order).
std::vector<bool> removed(const std::vector<Value> &all, const std::vector<Value> &rest) {
    std::vector<bool> gone(all.size(), true);
    size_t next = 0;
    for (size_t i = 0; i < all.size() && next < rest.size(); i++)
        if (json_equal(all[i], rest[next])) {
            gone[i] = false;
            next++;
        }
    return gone;
}

void put(const ReturnedMeasurements &r, const Value &measurement,
         const std::optional<Value> &meta) {
    const Value *time = measurement.find(r.time_field);
    if (time == nullptr || !time->is(Value::Kind::Date))
        throw Error(ErrorCode::Corrupt, "bucket data is corrupt: a measurement has no time");
    std::string meta_field = r.meta_field ? r.meta_field : "";
    Datum values[3] = {TimestampTzGetDatum(to_timestamptz(time->as_date())), 0, 0};
    bool nulls[3] = {false, false, false};
    int doc = r.desc->natts - 1;
    if (doc == 2) {
        nulls[1] = !meta.has_value();
        if (meta)
            values[1] = PointerGetDatum(value_to_jsonb(*meta));
    }
    values[doc] =
        PointerGetDatum(value_to_jsonb(view_document(measurement, r.time_field, meta_field, meta)));
    pg_call([&] { tuplestore_putvalues(r.store, r.desc, values, nulls); });
}

}  // namespace

ReturnedMeasurements *start_returning(QueryDesc *query, Oid view) {
    if (!query->plannedstmt->hasReturning)
        return nullptr;
    CollectionInfo info = lookup_collection(view);
    return pg_call([&] {
        MemoryContext old = MemoryContextSwitchTo(query->estate->es_query_cxt);
        auto *r = static_cast<ReturnedMeasurements *>(palloc0(sizeof(ReturnedMeasurements)));
        r->store = tuplestore_begin_heap(false, false, work_mem);
        r->desc = view_desc(!info.meta_field.empty());
        r->time_field = pstrdup(info.time_field.c_str());
        r->meta_field = info.meta_field.empty() ? nullptr : pstrdup(info.meta_field.c_str());
        MemoryContextSwitchTo(old);
        return r;
    });
}

void return_measurements(ReturnedMeasurements *returned, TupleTableSlot *bucket,
                         TupleTableSlot *kept) {
    MemoryContext scratch =
        AllocSetContextCreate(CurrentMemoryContext, "tscoll returning", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old = MemoryContextSwitchTo(scratch);
    guarded([&] {
        std::vector<Value> all = measurements_of(bucket);
        std::vector<bool> gone(all.size(), true);
        if (kept != nullptr)
            gone = removed(all, measurements_of(kept));
        std::optional<Value> meta = meta_of(bucket);
        for (size_t i = 0; i < all.size(); i++)
            if (gone[i])
                put(*returned, all[i], meta);
    });
    MemoryContextSwitchTo(old);
    MemoryContextDelete(scratch);
}

}  // namespace tscoll::pg

// ---------------------------------------------------------------------------
// The custom scan. Plain C from here: no C++ object with a destructor.

namespace {

struct ReturningState {
    CustomScanState css;
    PlanState *modify;
    bool modified;           // the ModifyTable has run to its end
    TupleTableSlot *stored;  // a row of the store, as it holds them
};

void begin_returning(CustomScanState *node, EState *estate, int eflags) {
    auto *state = reinterpret_cast<ReturningState *>(node);
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    state->modify = ExecInitNode(static_cast<Plan *>(linitial(plan->custom_plans)), estate, eflags);
    node->custom_ps = list_make1(state->modify);
    state->stored = ExecInitExtraTupleSlot(estate, node->ss.ss_ScanTupleSlot->tts_tupleDescriptor,
                                           &TTSOpsMinimalTuple);
}

TupleTableSlot *exec_returning(CustomScanState *node) {
    auto *state = reinterpret_cast<ReturningState *>(node);
    tscoll::pg::ModificationCount *counted = tscoll::pg::counted_modification;
    if (!state->modified) {
        while (!TupIsNull(ExecProcNode(state->modify)))
            ;
        state->modified = true;
    }
    if (counted == nullptr || counted->returned == nullptr ||
        !tuplestore_gettupleslot(counted->returned->store, true, false, state->stored))
        return nullptr;
    TupleTableSlot *scan = ExecCopySlot(node->ss.ss_ScanTupleSlot, state->stored);
    if (node->ss.ps.ps_ProjInfo == nullptr)  // RETURNING * needs none
        return scan;
    ResetExprContext(node->ss.ps.ps_ExprContext);
    node->ss.ps.ps_ExprContext->ecxt_scantuple = scan;
    return ExecProject(node->ss.ps.ps_ProjInfo);
}

void end_returning(CustomScanState *node) {
    ExecEndNode(reinterpret_cast<ReturningState *>(node)->modify);
}

void rescan_returning(CustomScanState *) {
    elog(ERROR, "tscoll: a statement's RETURNING cannot be scanned again");
}

Node *create_returning_state(CustomScan *plan);

const CustomScanMethods kReturningMethods = {"TscollReturning", create_returning_state};

const CustomExecMethods kReturningExecMethods = {
    "TscollReturning", begin_returning, exec_returning, end_returning, rescan_returning,
};

Node *create_returning_state(CustomScan *) {
    auto *state = static_cast<ReturningState *>(palloc0(sizeof(ReturningState)));
    NodeSetTag(state, T_CustomScanState);
    state->css.methods = &kReturningExecMethods;
    return reinterpret_cast<Node *>(state);
}

struct ReturningCheck {
    Index view_rti;
    bool other_rows;  // reads a row other than the view's columns
};

bool check_returning(Node *node, ReturningCheck *check) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (v->varlevelsup == 0 &&
            (v->varno != static_cast<int>(check->view_rti) || v->varattno <= 0))
            check->other_rows = true;
        return false;
    }
    if (IsA(node, SubLink) || IsA(node, Query)) {
        check->other_rows = true;
        return false;
    }
    return expression_tree_walker(node, tscoll::pg::walker(check_returning), check);
}

// The returning list planned as PostgreSQL plans an expression (default
// arguments, named arguments, constants folded; what it depends on joins
// the statement's), its view columns read from the scan tuple.
List *on_scan_tuple(PlannedStmt *stmt, List *returning, Index view_rti) {
    List *result = NIL;
    ListCell *lc;
    foreach (lc, returning) {
        TargetEntry *entry = flatCopyTargetEntry(lfirst_node(TargetEntry, lc));
        entry->expr =
            expression_planner_with_deps(entry->expr, &stmt->relationOids, &stmt->invalItems);
        result = lappend(result, entry);
    }
    ChangeVarNodes(reinterpret_cast<Node *>(result), view_rti, INDEX_VAR, 0);
    return result;
}

}  // namespace

namespace tscoll::pg {

void plan_returning(PlannedStmt *stmt, List *returning, Index view_rti, Oid view) {
    ReturningCheck check = {view_rti, false};
    check_returning(reinterpret_cast<Node *>(returning), &check);
    if (check.other_rows)
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("RETURNING of time-series collection \"%s\" reads only its columns",
                               get_rel_name(view)),
                        errhint("Return the collection's columns, or expressions of them without "
                                "subqueries or whole rows.")));
    CustomScan *scan = makeNode(CustomScan);
    for (int attno = 1; get_attname(view, attno, true) != nullptr; attno++) {
        Var *column = makeVar(view_rti, attno, get_atttype(view, attno), -1, InvalidOid, 0);
        scan->custom_scan_tlist = lappend(scan->custom_scan_tlist,
                                          makeTargetEntry(reinterpret_cast<Expr *>(column), attno,
                                                          get_attname(view, attno, false), false));
    }
    Plan *modify = stmt->planTree;
    scan->scan.plan.targetlist = on_scan_tuple(stmt, returning, view_rti);
    scan->scan.plan.startup_cost = modify->total_cost;
    scan->scan.plan.total_cost = modify->total_cost;
    scan->scan.plan.plan_rows = modify->plan_rows;
    scan->scan.plan.plan_width = modify->plan_width;
    scan->custom_plans = list_make1(modify);
    scan->methods = &kReturningMethods;
    stmt->planTree = reinterpret_cast<Plan *>(scan);
    stmt->hasReturning = true;
}

void register_returning_scan() {
    RegisterCustomScanMethods(&kReturningMethods);
}

}  // namespace tscoll::pg
