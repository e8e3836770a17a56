// Planning the time merge (time_merge_exec.cpp): after PostgreSQL has made
// the plan, a Sort over the loop that unpacks each bucket becomes the merge.
// Plain PostgreSQL tree surgery: no C++ object with a destructor.
#include "pg/nodes/time_merge.hpp"
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
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/datum.h"
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
    claim->methods = &tscoll::pg::time_merge::kClaimMethods;
    return plan;
}

struct Rewrite {
    List *rtable;
    int next_plan_node_id;
};

bool reads_inner(Node *node, void *) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var))
        return reinterpret_cast<Var *>(node)->varno == INNER_VAR;
    return expression_tree_walker(node, tscoll::pg::walker(reads_inner), nullptr);
}

bool reads_param(Node *node, void *) {
    if (node == nullptr)
        return false;
    if (IsA(node, Param))
        return true;
    return expression_tree_walker(node, tscoll::pg::walker(reads_param), nullptr);
}

// `node`, an expression over the rows of `scan` (OUTER_VAR), over the
// relation `scan` reads.
Node *over_scan(Node *node, Plan *scan) {
    if (node != nullptr && IsA(node, Var) && reinterpret_cast<Var *>(node)->varno == OUTER_VAR) {
        auto *var = reinterpret_cast<Var *>(node);
        return reinterpret_cast<Node *>(
            copyObjectImpl(list_nth_node(TargetEntry, scan->targetlist, var->varattno - 1)->expr));
    }
    return expression_tree_mutator(node, tscoll::pg::mutator(over_scan), scan);
}

// The loop's output expressions of the bucket row alone (meta->>'k') are
// computed once per bucket, by the scan of the buckets, not for each row.
void hoist_bucket_expressions(NestLoop *loop, Plan *scan) {
    ListCell *lc;
    foreach (lc, loop->join.plan.targetlist) {
        auto *entry = lfirst_node(TargetEntry, lc);
        Node *expr = reinterpret_cast<Node *>(entry->expr);
        if (IsA(expr, Var) || IsA(expr, Const) || reads_inner(expr, nullptr) ||
            reads_param(expr, nullptr) || contain_volatile_functions(expr))
            continue;
        auto resno = static_cast<AttrNumber>(list_length(scan->targetlist) + 1);
        scan->targetlist = lappend(
            scan->targetlist,
            makeTargetEntry(reinterpret_cast<Expr *>(over_scan(expr, scan)), resno,
                            entry->resname != nullptr ? pstrdup(entry->resname) : nullptr, true));
        entry->expr = reinterpret_cast<Expr *>(
            makeVar(OUTER_VAR, resno, exprType(expr), exprTypmod(expr), exprCollation(expr), 0));
    }
}

// How many of the Sort's keys after the time are the same for all the rows
// of a bucket: expressions of the bucket row alone.
int series_keys(NestLoop *loop, const Sort *sort) {
    int k = 1;
    while (k < sort->numCols) {
        Node *expr = reinterpret_cast<Node *>(
            list_nth_node(TargetEntry, loop->join.plan.targetlist, sort->sortColIdx[k] - 1)->expr);
        if (reads_inner(expr, nullptr) || contain_volatile_functions(expr))
            break;
        k++;
    }
    return k - 1;
}

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
    hoist_bucket_expressions(loop, outer);
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
    // Under a LIMIT, no row of a bucket after its first rows_needed is
    // returned, unless a condition above the scan drops some of those.
    if (rows_needed > 0 && loop->join.joinqual == NIL && loop->join.plan.qual == NIL)
        tscoll::pg::keep_first_rows(innerPlan(loop), rows_needed, !ascending);
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
    merge->custom_private = lappend(merge->custom_private, makeInteger(series_keys(loop, sort)));
    merge->methods = &tscoll::pg::time_merge::kMergeMethods;
    return &merge->scan.plan;
}

// Whether `plan` returns its child's rows as they are, column for column.
bool passes_on(const Plan *plan) {
    if (list_length(plan->targetlist) != list_length(outerPlan(plan)->targetlist))
        return false;
    ListCell *lc;
    foreach (lc, plan->targetlist) {
        auto *var = reinterpret_cast<Var *>(lfirst_node(TargetEntry, lc)->expr);
        if (!IsA(var, Var) || var->varno != OUTER_VAR ||
            var->varattno != lfirst_node(TargetEntry, lc)->resno)
            return false;
    }
    return true;
}

// The time merge, in one process, in place of a Gather Merge of Sorts that
// it could replace, for a plan without a LIMIT: its rows stream out as the
// buckets are read, while the Gather Merge waits for every participant to
// sort all of its rows (and its leader then spends on the rows' output
// what the sorting saved). nullptr when the merge does not apply.
Plan *serial_time_merge(GatherMerge *gather, Rewrite *rewrite) {
    auto *sort = reinterpret_cast<Sort *>(outerPlan(&gather->plan));
    auto *loop = sort != nullptr && IsA(sort, Sort) ? outerPlan(&sort->plan) : nullptr;
    Plan *outer = loop != nullptr && IsA(loop, NestLoop) ? outerPlan(loop) : nullptr;
    if (outer == nullptr || !outer->parallel_aware || !passes_on(&gather->plan))
        return nullptr;
    outer->parallel_aware = false;
    Plan *merge = time_merge(sort, 0, rewrite);
    if (merge == nullptr) {
        outer->parallel_aware = true;
        return nullptr;
    }
    // The names, sort references and origins of the columns are the Gather
    // Merge's: only the top node of a plan carries them, and clients read
    // the names.
    apply_tlist_labeling(merge->targetlist, gather->plan.targetlist);
    merge->initPlan = gather->plan.initPlan;
    return merge;
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
    if (IsA(plan, GatherMerge) && parent.rows_needed == 0 && !parent.marks) {
        Plan *merge = serial_time_merge(reinterpret_cast<GatherMerge *>(plan), rewrite);
        return merge != nullptr ? merge : plan;
    }
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
    RegisterCustomScanMethods(&time_merge::kMergeMethods);
    RegisterCustomScanMethods(&time_merge::kClaimMethods);
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
