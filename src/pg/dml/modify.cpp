// UPDATE and DELETE through a collection's view (doc/REFERENCE.md §3.5,
// UPDATE; §3.6, DELETE), translated at parse analysis into statements on
// the bucket table:
//
//   UPDATE v SET <meta> = e(meta) WHERE p(meta)
//     -> UPDATE <buckets> SET meta = e(meta) WHERE p(meta)
//   DELETE FROM v WHERE p(meta)
//     -> DELETE FROM <buckets> WHERE p(meta)
//   DELETE FROM v WHERE p(any column)
//     -> MERGE INTO <buckets> b USING (VALUES (1)) ON <b may hold a match>
//          WHEN MATCHED AND <all of b matches, known from min/max time> THEN DELETE
//          WHEN MATCHED AND <all of b matches, unpacked> THEN DELETE
//          WHEN MATCHED AND <some of b matches> THEN UPDATE SET (control, data) = <b without them>
//        planned as a DELETE, so that it reports as one. Every condition reads
//        the target row itself: a bucket changed by a concurrent insert is
//        judged again on its new version.
//
// The view stays in the statement's range table, unreferenced: the user's
// privileges on it are checked as for any statement on a view, and the
// bucket table is accessed with its owner's rights, as a view's tables are.
// The executor hook makes each statement count measurements, not buckets
// (ModificationCount), and makes the catalog forget the collection's series
// once per statement.
//
// Without the hooks (tscoll not loaded yet when the statement was parsed)
// the view's rules raise an error asking to run it again.
extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "parser/parse_func.h"
#include "parser/parse_node.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/syscache.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/bucket.hpp"
#include "core/error.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/dml/modify.hpp"
#include "pg/dml/translation.hpp"
#include "pg/node_trees.hpp"
#include "pg/pg_time.hpp"
#include "pg/plan/read_plan.hpp"
#include "pg/plan/typed_columns.hpp"
#include "pg/nodes/returning.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"
#include "pg/nodes/time_merge.hpp"
#include "pg/nodes/unpack_scan.hpp"

namespace tscoll::pg::dml {

using tscoll::pg::copy_node;
using tscoll::pg::mutator;
using tscoll::pg::walker;

char *copy(const std::string &s) {
    return tscoll::pg::pg_call([&] { return pnstrdup(s.data(), s.size()); });
}

// The collection whose view `rte` is, or nullptr.
Collection *collection_of(RangeTblEntry *rte) {
    if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_VIEW ||
        !OidIsValid(get_extension_oid("tscoll", true)))
        return nullptr;
    auto *c = static_cast<Collection *>(palloc0(sizeof(Collection)));
    bool found = tscoll::pg::guarded([&] {
        std::optional<tscoll::pg::CollectionInfo> info = tscoll::pg::find_collection(rte->relid);
        if (!info)
            return false;
        c->bucket_table = info->bucket_table;
        c->owner = info->owner;
        c->name = copy(info->view_name);
        c->bucket_name = copy(info->bucket_name);
        c->time_field = copy(info->time_field);
        c->meta_field = info->meta_field.empty() ? nullptr : copy(info->meta_field);
        c->time_column = info->view_time_column;
        c->meta_column = info->view_meta_column;
        c->doc_column = info->view_doc_column;
        c->bucket_meta = info->bucket_meta_column;
        c->bucket_min_time = info->bucket_min_time_column;
        c->bucket_max_time = info->bucket_max_time_column;
        c->distributed = info->distributed();
        return true;
    });
    return found ? c : nullptr;
}

const char *command_name(const Query *q) {
    return q->commandType == CMD_UPDATE ? "UPDATE" : "DELETE";
}

[[noreturn]] void refuse(const char *message, const char *hint) {
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg_internal("%s", message),
                    errhint("%s", hint)));
    pg_unreachable();
}

const char *meta_update_hint(const Collection *c) {
    if (c->meta_field == nullptr)
        return "Measurements cannot be changed in place: DELETE them and INSERT them again.";
    return psprintf(
        "Update the meta field only: UPDATE %s SET %s = ... WHERE <condition on %s>. "
        "To change measurements, DELETE them and INSERT them again.",
        c->name, quote_identifier(c->meta_field), quote_identifier(c->meta_field));
}

// The message of doc/REFERENCE.md §3.5 (UPDATE), for a column assigned or
// read other than the meta field.
[[noreturn]] void refuse_field(const Collection *c, const char *field) {
    const char *message =
        c->meta_field ? psprintf(
                            "cannot update field \"%s\" of time-series collection \"%s\": only the "
                            "meta field \"%s\" can be updated",
                            field, c->name, c->meta_field)
                      : psprintf(
                            "cannot update field \"%s\" of time-series collection \"%s\": only the "
                            "meta field can be updated, and the collection has none",
                            field, c->name);
    refuse(message, meta_update_hint(c));
}

// ---------------------------------------------------------------------------
// Columns of the view a query reads.

bool collect_columns(Node *node, ColumnUse *use) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (v->varno == static_cast<int>(use->view_rti) &&
            v->varlevelsup == static_cast<Index>(use->depth)) {
            if (v->varattno == 0)
                use->whole_row = true;
            else
                use->columns = bms_add_member(use->columns, v->varattno);
        }
        return false;
    }
    if (IsA(node, CurrentOfExpr)) {
        use->current_of = true;
        return false;
    }
    if (IsA(node, Query)) {
        use->depth++;
        bool result = query_tree_walker(castNode(Query, node), walker(collect_columns), use, 0);
        use->depth--;
        return result;
    }
    return expression_tree_walker(node, walker(collect_columns), use);
}

ColumnUse columns_read(Node *node, Index view_rti) {
    ColumnUse use = {view_rti, 0, nullptr, false, false};
    collect_columns(node, &use);
    return use;
}

// The measurement field of the first doc->>'f' or doc->'f' in an UPDATE,
// so that an error names "temp" rather than the doc column.
struct DocField {
    Index view_rti;
    AttrNumber doc_column;
    int depth;
    const char *field;
};

bool find_doc_field(Node *node, DocField *d) {
    if (node == nullptr)
        return false;
    if (IsA(node, OpExpr) && list_length(castNode(OpExpr, node)->args) == 2) {
        auto *op = castNode(OpExpr, node);
        Node *left = static_cast<Node *>(linitial(op->args));
        Node *right = static_cast<Node *>(lsecond(op->args));
        const char *name = get_opname(op->opno);
        if (IsA(left, Var) && IsA(right, Const) && !castNode(Const, right)->constisnull &&
            castNode(Const, right)->consttype == TEXTOID && name != nullptr &&
            (strcmp(name, "->>") == 0 || strcmp(name, "->") == 0)) {
            Var *v = castNode(Var, left);
            if (v->varno == static_cast<int>(d->view_rti) && v->varattno == d->doc_column &&
                v->varlevelsup == static_cast<Index>(d->depth)) {
                d->field = TextDatumGetCString(castNode(Const, right)->constvalue);
                return true;
            }
        }
    }
    if (IsA(node, Query)) {
        d->depth++;
        bool found = query_tree_walker(castNode(Query, node), walker(find_doc_field), d, 0);
        d->depth--;
        return found;
    }
    return expression_tree_walker(node, walker(find_doc_field), d);
}

// ---------------------------------------------------------------------------
// Moving an expression over the view onto the bucket table: the meta column
// becomes the bucket's meta, time and doc the unpacked measurement's.

Node *map_columns(Node *node, ColumnMap *map) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (v->varno != static_cast<int>(map->view_rti) ||
            v->varlevelsup != static_cast<Index>(map->depth))
            return reinterpret_cast<Node *>(copy_node(v));
        const Collection *c = map->c;
        if (v->varattno == c->meta_column && c->meta_column != 0)
            return reinterpret_cast<Node *>(makeVar(map->bucket_rti, c->bucket_meta, JSONBOID, -1,
                                                    InvalidOid, map->depth + map->bucket_levels));
        if (map->measurement_rti != 0 && v->varattno == c->time_column)
            return reinterpret_cast<Node *>(
                makeVar(map->measurement_rti, 1, TIMESTAMPTZOID, -1, InvalidOid, map->depth));
        if (map->measurement_rti != 0 && v->varattno == c->doc_column)
            return reinterpret_cast<Node *>(
                makeVar(map->measurement_rti, 2, JSONBOID, -1, InvalidOid, map->depth));
        elog(ERROR, "tscoll: column %d of the view cannot be translated", v->varattno);
    }
    if (IsA(node, Query)) {
        map->depth++;
        Query *q = query_tree_mutator(castNode(Query, node), mutator(map_columns), map, 0);
        map->depth--;
        return reinterpret_cast<Node *>(q);
    }
    return expression_tree_mutator(node, mutator(map_columns), map);
}

Oid placeholder_function() {
    Oid types[] = {INT4OID};
    return LookupFuncName(
        list_make2(makeString(pstrdup("tscoll")), makeString(pstrdup("_placeholder"))), 1, types,
        false);
}

// RETURNING reads the measurements a statement changed (nodes/returning.hpp).
// Its columns are those of an entry the statement's range table gains, a
// call of tscoll._placeholder(3) shaped like the view: a reference to the
// view itself would make the rewriter expand it into a scan of every
// bucket. The planner finds the entry, and plans RETURNING itself.
void move_returning(Query *from, Index view_rti, Oid view, Query *to) {
    if (from->returningList == NIL)
        return;
    FuncExpr *call = makeFuncExpr(
        placeholder_function(), BOOLOID,
        list_make1(makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(kReturned), false, true)),
        InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
    RangeTblFunction *function = makeNode(RangeTblFunction);
    function->funcexpr = reinterpret_cast<Node *>(call);
    RangeTblEntry *returned = makeNode(RangeTblEntry);
    returned->rtekind = RTE_FUNCTION;
    returned->functions = list_make1(function);
    List *names = NIL;
    for (AttrNumber attno = 1; get_attname(view, attno, true) != nullptr; attno++)
        names = lappend(names, makeString(get_attname(view, attno, false)));
    returned->eref = makeAlias(get_rel_name(view), names);
    to->rtable = lappend(to->rtable, returned);
    List *returning = from->returningList;
    from->returningList = NIL;
    ChangeVarNodes(reinterpret_cast<Node *>(returning), view_rti, list_length(to->rtable), 0);
    to->returningList = returning;
}

// The column of tscoll's own RETURNING list: a distributed collection's
// bucket rows are changed on the workers, where the access method cannot
// count their measurements for the statement, so the statement returns
// each row's control.count to the coordinator, which adds them up.
constexpr const char *kCountedColumn = "tscoll_measurements";
constexpr AttrNumber kBucketControl = 3;

void count_by_returning(Query *q) {
    Var *control = makeVar(q->resultRelation, kBucketControl, JSONBOID, -1, InvalidOid, 0);
    Const *key = makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1, CStringGetTextDatum("count"),
                           false, false);
    FuncExpr *field = makeFuncExpr(F_JSONB_OBJECT_FIELD_TEXT, TEXTOID, list_make2(control, key),
                                   InvalidOid, DEFAULT_COLLATION_OID, COERCE_EXPLICIT_CALL);
    CoerceViaIO *count = makeNode(CoerceViaIO);
    count->arg = reinterpret_cast<Expr *>(field);
    count->resulttype = INT8OID;
    count->resultcollid = InvalidOid;
    count->coerceformat = COERCE_EXPLICIT_CAST;
    count->location = -1;
    q->returningList = list_make1(
        makeTargetEntry(reinterpret_cast<Expr *>(count), 1, pstrdup(kCountedColumn), false));
    RangeTblEntry *bucket = rt_fetch(q->resultRelation, q->rtable);
    bucket->selectedCols =
        bms_add_member(bucket->selectedCols, kBucketControl - FirstLowInvalidHeapAttributeNumber);
}

bool is_counting_list(List *targets) {
    return list_length(targets) == 1 && linitial_node(TargetEntry, targets)->resname != nullptr &&
           strcmp(linitial_node(TargetEntry, targets)->resname, kCountedColumn) == 0;
}

// The statement's target, the view, becomes the bucket table, read and
// written as its owner; the view stays in the range table for the user's
// privileges.
void retarget(Query *q, const Collection *c) {
    Index view_rti = q->resultRelation;
    List *returning = q->returningList;  // moved below, not mapped onto buckets
    q->returningList = NIL;
    RangeTblEntry *view = rt_fetch(q->resultRelation, q->rtable);
    RangeTblEntry *bucket = copy_node(view);
    bucket->relid = c->bucket_table;
    bucket->relkind = RELKIND_RELATION;
    bucket->inh = false;
    bucket->checkAsUser = c->owner;
    bucket->requiredPerms = ACL_SELECT | (q->commandType == CMD_UPDATE ? ACL_UPDATE : ACL_DELETE);
    bucket->selectedCols = bms_make_singleton(c->bucket_meta - FirstLowInvalidHeapAttributeNumber);
    bucket->updatedCols = q->commandType == CMD_UPDATE ? bucket->selectedCols : nullptr;
    bucket->insertedCols = nullptr;
    bucket->extraUpdatedCols = nullptr;
    List *names = NIL;
    for (const char *name : {"_id", "meta", "control", "data", "min_time", "max_time"})
        names = lappend(names, makeString(pstrdup(name)));
    bucket->eref =
        makeAlias(view->alias ? view->alias->aliasname : get_rel_name(c->bucket_table), names);

    ColumnMap map = {c, static_cast<Index>(q->resultRelation), 0,
                     0, static_cast<Index>(q->resultRelation), 0};
    Query *mapped = query_tree_mutator(q, mutator(map_columns), &map, 0);
    *q = *mapped;
    list_nth_cell(q->rtable, q->resultRelation - 1)->ptr_value = bucket;
    q->rtable = lappend(q->rtable, view);
    q->returningList = returning;
    move_returning(q, view_rti, view->relid, q);
    ListCell *lc;
    foreach (lc, q->targetList) {
        TargetEntry *tle = lfirst_node(TargetEntry, lc);
        if (!tle->resjunk) {
            tle->resno = c->bucket_meta;
            tle->resname = pstrdup("meta");
        }
    }
}

void translate_update(Query *q, const Collection *c) {
    Oid view = rt_fetch(q->resultRelation, q->rtable)->relid;
    ListCell *lc;
    foreach (lc, q->targetList) {
        TargetEntry *tle = lfirst_node(TargetEntry, lc);
        if (!tle->resjunk && (c->meta_column == 0 || tle->resno != c->meta_column))
            refuse_field(c, get_attname(view, tle->resno, false));
    }
    ColumnUse use = columns_read(reinterpret_cast<Node *>(q->targetList), q->resultRelation);
    ColumnUse where = columns_read(reinterpret_cast<Node *>(q->jointree), q->resultRelation);
    if (use.whole_row || where.whole_row)
        refuse_field(c, "*");
    int column = -1;
    Bitmapset *read = bms_union(use.columns, where.columns);
    while ((column = bms_next_member(read, column)) >= 0) {
        if (column == c->meta_column)
            continue;
        DocField doc = {static_cast<Index>(q->resultRelation), c->doc_column, 0, nullptr};
        if (column == c->doc_column &&
            !find_doc_field(reinterpret_cast<Node *>(q->targetList), &doc))
            find_doc_field(reinterpret_cast<Node *>(q->jointree), &doc);
        refuse_field(c, doc.field ? doc.field : get_attname(view, column, false));
    }
    retarget(q, c);
}

// ---------------------------------------------------------------------------
// Statements as the hooks see them.

void translate(Query *q);

// The statement's typed field columns as expressions on doc, from the
// view's definition (plan/typed_columns.hpp); an assignment to one stays
// for translate_update to refuse.
void read_typed_columns(Query *q, const Collection *c) {
    Relation view = relation_open(rt_fetch(q->resultRelation, q->rtable)->relid, AccessShareLock);
    Query *definition = copy_node(get_view_query(view));
    relation_close(view, AccessShareLock);
    read_typed_columns_through_doc(q, q->resultRelation, c->doc_column, definition->targetList);
}

void refuse_in_cte(Query *q) {
    ListCell *lc;
    foreach (lc, q->cteList) {
        CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);
        Query *inner = castNode(Query, cte->ctequery);
        if ((inner->commandType == CMD_UPDATE || inner->commandType == CMD_DELETE) &&
            inner->resultRelation != 0) {
            if (Collection *c = collection_of(rt_fetch(inner->resultRelation, inner->rtable)))
                refuse(psprintf("%s of time-series collection \"%s\" is not supported in WITH",
                                command_name(inner), c->name),
                       "Run it as a statement of its own.");
        }
    }
}

// PostgreSQL's own message blames the view's rules; what a user needs to
// know is that a collection keeps every measurement it is given.
void refuse_on_conflict(Query *q) {
    if (q->commandType != CMD_INSERT || q->onConflict == nullptr || q->resultRelation == 0)
        return;
    if (Collection *c = collection_of(rt_fetch(q->resultRelation, q->rtable)))
        refuse(psprintf("INSERT ... ON CONFLICT is not supported on time-series collection \"%s\"",
                        c->name),
               "A time-series collection keeps every measurement, duplicates included, as "
               "MongoDB's do: INSERT without ON CONFLICT, or DELETE the measurements to replace "
               "first.");
}

void translate(Query *q) {
    if (q->commandType == CMD_UTILITY && q->utilityStmt && IsA(q->utilityStmt, ExplainStmt)) {
        Node *inner = castNode(ExplainStmt, q->utilityStmt)->query;
        if (IsA(inner, Query))
            translate(castNode(Query, inner));
        return;
    }
    ListCell *lc;
    foreach (lc, q->cteList)
        refuse_on_conflict(castNode(Query, lfirst_node(CommonTableExpr, lc)->ctequery));
    refuse_on_conflict(q);
    if (q->cteList != NIL)
        refuse_in_cte(q);
    if ((q->commandType != CMD_UPDATE && q->commandType != CMD_DELETE) || q->resultRelation == 0)
        return;
    Collection *c = collection_of(rt_fetch(q->resultRelation, q->rtable));
    if (c == nullptr)
        return;
    if (c->distributed && q->returningList != NIL)
        refuse(psprintf("%s ... RETURNING is not supported on distributed time-series collection "
                        "\"%s\"",
                        command_name(q), c->name),
               "Select the measurements first, then change them.");
    read_typed_columns(q, c);
    if (q->commandType == CMD_UPDATE)
        translate_update(q, c);
    else
        translate_delete(q, c);
}

// A translated statement keeps the collection's view in its range table,
// unreferenced, with the UPDATE or DELETE privilege to check: its index,
// else 0.
Index modified_view(List *rtable) {
    ListCell *lc;
    foreach (lc, rtable) {
        RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
        if (rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_VIEW &&
            (rte->requiredPerms & (ACL_UPDATE | ACL_DELETE)) != 0)
            return foreach_current_index(lc) + 1;
    }
    return 0;
}

// The entry move_returning() added, else 0.
Index returned_entry(List *rtable) {
    Oid placeholder = placeholder_function();
    ListCell *lc;
    foreach (lc, rtable) {
        RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);
        if (rte->rtekind != RTE_FUNCTION || list_length(rte->functions) != 1)
            continue;
        Node *call = linitial_node(RangeTblFunction, rte->functions)->funcexpr;
        if (IsA(call, FuncExpr) && castNode(FuncExpr, call)->funcid == placeholder)
            return foreach_current_index(lc) + 1;
    }
    return 0;
}

// The bucket table a translated UPDATE or DELETE writes, else InvalidOid.
Oid translated_target(const PlannedStmt *stmt) {
    if ((stmt->commandType != CMD_UPDATE && stmt->commandType != CMD_DELETE) ||
        stmt->resultRelations == NIL || modified_view(stmt->rtable) == 0)
        return InvalidOid;
    Oid relid = rt_fetch(linitial_int(stmt->resultRelations), stmt->rtable)->relid;
    return tscoll::pg::is_bucket_table(relid) ? relid : InvalidOid;
}

}  // namespace tscoll::pg::dml

namespace tscoll::pg {

void translate_modification(Query *query) {
    dml::translate(query);
}

namespace {

// Gives a translated UPDATE or DELETE of a distributed collection, without
// a RETURNING of the user's, tscoll's own; true when it did. At planning,
// not at parse analysis: a prepared statement's result columns come from
// the query the plan cache keeps, which must not return.
bool count_by_returning(Query *parse) {
    Index view_rti = dml::modified_view(parse->rtable);
    if ((parse->commandType != CMD_UPDATE && parse->commandType != CMD_DELETE) ||
        parse->returningList != NIL || view_rti == 0)
        return false;
    Oid view = rt_fetch(view_rti, parse->rtable)->relid;
    Oid bucket_table = rt_fetch(parse->resultRelation, parse->rtable)->relid;
    bool distributed = guarded([&] {
        std::optional<CollectionInfo> info = find_collection_of_bucket_table(bucket_table);
        return info && info->view == view && info->distributed();
    });
    if (distributed)
        dml::count_by_returning(parse);
    return distributed;
}

}  // namespace

TranslatedReturning take_returning(Query *parse) {
    TranslatedReturning r = {0, 0, NIL, false};
    if (parse->returningList == NIL) {
        r.counting = count_by_returning(parse);
        return r;
    }
    if ((r.view_rti = dml::modified_view(parse->rtable)) == 0 ||
        (r.returned_rti = dml::returned_entry(parse->rtable)) == 0)
        return TranslatedReturning{0, 0, NIL, false};
    r.returning = parse->returningList;
    parse->returningList = NIL;
    return r;
}

void finish_translated_plan(Query *parse, PlannedStmt *result, const TranslatedReturning &r) {
    if (r.returned_rti != 0) {
        parse->returningList = r.returning;
        plan_returning(result, r.returning, r.returned_rti,
                       rt_fetch(r.view_rti, parse->rtable)->relid);
    }
    // MERGE on a view does not exist: this is a translated DELETE.
    if (result->commandType == CMD_MERGE && dml::modified_view(parse->rtable) != 0)
        result->commandType = CMD_DELETE;
    // The client gets no rows from tscoll's own RETURNING (start_counting_run).
    if (r.counting)
        result->hasReturning = false;
}

namespace {

// Adds up the rows of tscoll's own RETURNING list.
struct Counter {
    DestReceiver receiver;
    uint64 measurements;
};

bool count_row(TupleTableSlot *slot, DestReceiver *self) {
    bool isnull = false;
    Datum count = slot_getattr(slot, 1, &isnull);
    if (!isnull)
        reinterpret_cast<Counter *>(self)->measurements += DatumGetInt64(count);
    return true;
}

void ignore_startup(DestReceiver *, int, TupleDesc) {}
void ignore(DestReceiver *) {}

}  // namespace

DestReceiver *start_counting_run(QueryDesc *query) {
    PlannedStmt *stmt = query->plannedstmt;
    if ((stmt->commandType != CMD_UPDATE && stmt->commandType != CMD_DELETE) ||
        stmt->hasReturning || !dml::is_counting_list(stmt->planTree->targetlist))
        return nullptr;
    auto *counter = static_cast<Counter *>(palloc0(sizeof(Counter)));
    counter->receiver.receiveSlot = count_row;
    counter->receiver.rStartup = ignore_startup;
    counter->receiver.rShutdown = ignore;
    counter->receiver.rDestroy = ignore;
    counter->receiver.mydest = DestNone;
    stmt->hasReturning = true;  // so that the executor sends the rows
    return &counter->receiver;
}

void finish_counting_run(QueryDesc *query, DestReceiver *counter) {
    query->plannedstmt->hasReturning = false;
    if (query->estate != nullptr)
        query->estate->es_processed = reinterpret_cast<Counter *>(counter)->measurements;
}

namespace {

// Whether the plan's modification is a MERGE (a DELETE by measurement
// values), also under RETURNING's custom scan.
bool merges(Plan *plan) {
    if (plan == nullptr)
        return false;
    if (IsA(plan, ModifyTable))
        return reinterpret_cast<ModifyTable *>(plan)->operation == CMD_MERGE;
    bool found = false;
    for_each_child(plan, [&](Plan *&child, ChildSide) { found = found || merges(child); });
    return found;
}

}  // namespace

bool start_translated_run(QueryDesc *query, ModificationCount *counted) {
    Oid bucket_table = dml::translated_target(query->plannedstmt);
    if (!OidIsValid(bucket_table))
        return false;
    guarded([&] { catalog::forget_series(bucket_table); });
    *counted = ModificationCount{query->plannedstmt->commandType == CMD_DELETE,
                                 merges(query->plannedstmt->planTree), 0, nullptr};
    Index view_rti = dml::modified_view(query->plannedstmt->rtable);
    counted->returned = guarded([&] {
        return start_returning(query, rt_fetch(view_rti, query->plannedstmt->rtable)->relid);
    });
    return true;
}

void reword_moved_rows_error(MemoryContext context) {
    MemoryContext error_context = MemoryContextSwitchTo(context);
    ErrorData *error = CopyErrorData();
    bool moved = error->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE &&
                 error->message != nullptr &&
                 strstr(error->message, "moved to another partition") != nullptr;
    FreeErrorData(error);
    if (!moved) {
        MemoryContextSwitchTo(error_context);
        return;
    }
    FlushErrorState();
    ereport(ERROR,
            (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
             errmsg("could not serialize access due to a concurrent fold of a bucket's tails"),
             errdetail("Measurements the statement read were moved into their bucket's row by a "
                       "transaction that committed while it waited."),
             errhint("Run the statement again.")));
}

void parse_cached_statements_again() {
    ResetPlanCache();
}

}  // namespace tscoll::pg

// tscoll._untranslated(collection regclass, command text): the view's
// rules call it when an UPDATE or DELETE reached them untranslated.
extern "C" {
PG_FUNCTION_INFO_V1(tscoll_untranslated);
}
Datum tscoll_untranslated(PG_FUNCTION_ARGS) {
    Oid view = PG_GETARG_OID(0);
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s of time-series collection \"%s\" was not translated by tscoll",
                           text_to_cstring(PG_GETARG_TEXT_PP(1)), get_rel_name(view)),
                    errhint("It was parsed before tscoll was loaded in the session (run it again: "
                            "tscoll is loaded now), or it went through another view (run it on the "
                            "collection). Add tscoll to shared_preload_libraries so that every "
                            "statement is translated.")));
    PG_RETURN_NULL();
}
