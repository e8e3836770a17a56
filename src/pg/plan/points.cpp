// Last points and first points (plan/read_plan.cpp): the view reads only
// the buckets that can hold each series' latest measurement, or the first
// k in time order. This file holds no C++ object with a destructor: it
// calls PostgreSQL directly (see guard.hpp).
extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "parser/scansup.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

#include <initializer_list>
#include <optional>
#include <utility>

#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/plan/collection_read.hpp"
#include "pg/node_trees.hpp"
#include "pg/read/unpack_call.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg::reads {

// ---------------------------------------------------------------------------
// The last point per series (doc/REFERENCE.md §3.4, SELECT): SELECT
// DISTINCT ON (<meta expressions>) ... ORDER BY <the same>, time DESC, with
// at most meta conditions, reads only each series' latest bucket (the one
// whose max_time, exact in control, is the series' latest), and only its
// latest measurement.

// Whether `node` reads a column other than the view's meta (of any query).
bool reads_other_than_meta(Node *node, CollectionRead *read) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var))
        return !is_column(node, *read, read->meta_column);
    return expression_tree_walker(node, walker(reads_other_than_meta), read);
}

bool reads_only_meta(Node *node, const CollectionRead &read) {
    return node == nullptr || (!checkExprHasSubLink(node) && !contain_volatile_functions(node) &&
                               !reads_other_than_meta(node, const_cast<CollectionRead *>(&read)));
}

// A SELECT whose FROM is the view alone: its WHERE filters the view's rows
// and nothing else's.
bool selects_from_view_alone(const CollectionRead &read) {
    Query *q = read.query;
    return q->commandType == CMD_SELECT && list_length(q->jointree->fromlist) == 1 &&
           IsA(linitial(q->jointree->fromlist), RangeTblRef) &&
           static_cast<Index>(linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex) ==
               read.view_rti;
}

// A SELECT from the view alone, filtered on meta at most: answers per
// series can then come from a few buckets.
bool selects_by_meta_only(const CollectionRead &read) {
    Query *q = read.query;
    return selects_from_view_alone(read) && read.meta_column != 0 && !q->hasWindowFuncs &&
           !q->hasTargetSRFs && q->groupingSets == NIL && q->setOperations == nullptr &&
           reads_only_meta(q->jointree->quals, read);
}

bool asks_for_last_points(const CollectionRead &read) {
    Query *q = read.query;
    if (!selects_by_meta_only(read) || !q->hasDistinctOn || q->hasAggs || q->groupClause != NIL ||
        list_length(q->sortClause) <= list_length(q->distinctClause))
        return false;
    ListCell *lc;
    foreach (lc, q->distinctClause) {
        auto *clause = lfirst_node(SortGroupClause, lc);
        if (!reads_only_meta(
                reinterpret_cast<Node *>(get_sortgroupclause_expr(clause, q->targetList)), read))
            return false;
    }
    auto *next =
        static_cast<SortGroupClause *>(list_nth(q->sortClause, list_length(q->distinctClause)));
    Oid opfamily, type;
    int16 strategy;
    return is_column(reinterpret_cast<Node *>(get_sortgroupclause_expr(next, q->targetList)), read,
                     read.time_column) &&
           get_ordering_op_properties(next->sortop, &opfamily, &type, &strategy) &&
           strategy == BTGreaterStrategyNumber;
}

// Every table the subqueries of `node` read is read as `as_user`.
bool read_as(Node *node, Oid *as_user) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        ListCell *lc;
        foreach (lc, castNode(Query, node)->rtable)
            lfirst_node(RangeTblEntry, lc)->checkAsUser = *as_user;
        return query_tree_walker(castNode(Query, node), walker(read_as), as_user, 0);
    }
    return expression_tree_walker(node, walker(read_as), as_user);
}

// `condition` on the bucket table aliased b, analysed, for the view's WHERE;
// each %s in it is the bucket table (no other % is special). Tables it reads
// are read as the view reads the bucket table.
// $1, $2 are timestamptz parameters, $3 an interval and $4 a timestamptz,
// for the caller to replace.
Node *analysed_bucket_condition(const CollectionRead &read, const char *condition, int params) {
    char *table = quote_qualified_identifier(
        get_namespace_name(get_rel_namespace(read.bucket_table)), get_rel_name(read.bucket_table));
    StringInfoData sql;
    initStringInfo(&sql);
    appendStringInfo(&sql, "SELECT FROM %s b WHERE ", table);
    for (const char *c = condition; *c != '\0'; c++) {
        if (c[0] == '%' && c[1] == 's') {
            appendStringInfoString(&sql, table);
            c++;
        } else {
            appendStringInfoChar(&sql, *c);
        }
    }
    int search_path = push_catalog_search_path();
    RawStmt *raw = linitial_node(RawStmt, pg_parse_query(sql.data));
    Oid types[] = {TIMESTAMPTZOID, TIMESTAMPTZOID, INTERVALOID, TIMESTAMPTZOID};
    Query *parsed = parse_analyze_fixedparams(raw, sql.data, types, params, nullptr);
    pop_search_path(search_path);
    Oid as_user = rt_fetch(read.bucket_rti, read.view->rtable)->checkAsUser;
    Node *qual = parsed->jointree->quals;
    read_as(qual, &as_user);
    ChangeVarNodes(qual, 1, read.bucket_rti, 0);
    return qual;
}

// Whether the view now reads only the latest measurement of each bucket.
bool read_last_points_only(const CollectionRead &read) {
    if (!asks_for_last_points(read))
        return false;
    const char *time_field =
        const_text(static_cast<Node *>(list_nth(unpack_arguments(read), unpack_call::kTimeField)));
    Node *latest_buckets = analysed_bucket_condition(
        read, psprintf("(coalesce(b.meta::text, ''), %s) IN "
                       "(SELECT coalesce(l.meta::text, ''), max(%s) FROM %%s l GROUP BY 1)",
                       latest_time_sql("b", time_field), latest_time_sql("l", time_field)));
    List *equals = qualified("pg_catalog", "=");
    Oid equals_op = OpernameGetOprid(equals, TIMESTAMPTZOID, TIMESTAMPTZOID);
    Expr *latest_point =
        make_opclause(equals_op, BOOLOID, false,
                      (Expr *)makeVar(read.unpack_rti, 1, TIMESTAMPTZOID, -1, InvalidOid, 0),
                      (Expr *)latest_time(read), InvalidOid, InvalidOid);
    set_opfuncid(castNode(OpExpr, latest_point));
    read.view->hasSubLinks = true;
    FromExpr *from = read.view->jointree;
    List *quals = list_make2(latest_buckets, latest_point);
    if (from->quals != nullptr)
        quals = lcons(from->quals, quals);
    from->quals = reinterpret_cast<Node *>(make_andclause(quals));
    return true;
}

// ---------------------------------------------------------------------------
// First points: ORDER BY time [DESC] LIMIT k, filtered on meta at most,
// needs only the buckets that reach a time T such that k measurements of
// the series read are known to be at or after (at or before) it. Every
// bucket holding an answer reaches T: its max_time is at least the answer's
// time, its min_time at most. Control gives two such T:
//  * the k-th latest (earliest) bucket max_time: each is a measurement's
//    (a tail's is a bound: left out, as NULL);
//  * the latest min_time (earliest max_time) at which the buckets starting
//    (ending) at or after (before) it hold k measurements (control.count).

// k when the query asks for its first k measurements by time (LIMIT plus
// OFFSET), with their order in *descending; else 0.
int64 first_points_asked(const CollectionRead &read, bool *descending) {
    Query *q = read.query;
    if (!selects_by_meta_only(read) || q->hasAggs || q->groupClause != NIL ||
        q->distinctClause != NIL || q->havingQual != nullptr || q->rowMarks != NIL ||
        q->sortClause == NIL || q->limitOption != LIMIT_OPTION_COUNT || q->limitCount == nullptr)
        return 0;
    auto *first = linitial_node(SortGroupClause, q->sortClause);
    Oid opfamily, type;
    int16 strategy;
    if (!is_column(reinterpret_cast<Node *>(get_sortgroupclause_expr(first, q->targetList)), read,
                   read.time_column) ||
        !get_ordering_op_properties(first->sortop, &opfamily, &type, &strategy))
        return 0;
    *descending = strategy == BTGreaterStrategyNumber;
    int64 count = constant_count(q->limitCount);
    int64 offset = q->limitOffset != nullptr ? constant_count(q->limitOffset) : 0;
    return count > 0 && offset >= 0 && count + offset <= 100000 ? count + offset : 0;
}

// Sets the WHERE of every query in `node` that reads the bucket table as l.
bool filter_series(Node *node, Node *conditions) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        Query *q = castNode(Query, node);
        auto *first = q->rtable != NIL ? linitial_node(RangeTblEntry, q->rtable) : nullptr;
        if (first != nullptr && first->rtekind == RTE_RELATION && first->alias != nullptr &&
            strcmp(first->alias->aliasname, "l") == 0)
            q->jointree->quals = copy_node(conditions);
        return query_tree_walker(q, walker(filter_series), conditions, 0);
    }
    return expression_tree_walker(node, walker(filter_series), conditions);
}

// The window in which the answers are, else NIL.
List *read_first_points_only(CollectionRead read) {
    bool descending = false;
    int64 k = first_points_asked(read, &descending);
    if (k == 0)
        return NIL;
    // %%s: the bucket table, filled in by analysed_bucket_condition.
    const char *by_count =
        "(SELECT s.%1$s FROM (SELECT l.%1$s, sum((l.control->>'count')::int8) OVER (ORDER BY "
        "l.%1$s %2$s) AS n FROM %%s l) s WHERE s.n >= %3$lld ORDER BY 1 %2$s LIMIT 1)";
    char *count_bound = psprintf(by_count, descending ? "min_time" : "max_time",
                                 descending ? "DESC" : "ASC", static_cast<long long>(k));
    char *condition = descending
                          ? psprintf(
                                "b.max_time >= coalesce(greatest((SELECT CASE WHEN l.control ? "
                                "'tail' THEN NULL ELSE l.max_time END FROM %%s l ORDER BY 1 DESC "
                                "NULLS LAST OFFSET %lld LIMIT 1), %s), '-infinity')",
                                static_cast<long long>(k - 1), count_bound)
                          : psprintf("b.min_time <= coalesce(%s, 'infinity')", count_bound);
    Node *qual = analysed_bucket_condition(read, condition);
    // The query's meta conditions, and their bucket conditions, which an
    // index on a meta subfield serves.
    Node *quals = read.query->jointree->quals;
    Node *conditions = meta_of_buckets(copy_node(quals), &read);
    if (Node *indexable = bucket_condition(read, quals))
        conditions =
            conditions == nullptr
                ? indexable
                : reinterpret_cast<Node *>(make_andclause(list_make2(conditions, indexable)));
    if (conditions != nullptr) {
        // In the subqueries below, the bucket table is the first relation.
        ChangeVarNodes(conditions, read.bucket_rti, 1, 0);
        filter_series(qual, conditions);
    }
    FromExpr *from = read.view->jointree;
    from->quals = from->quals == nullptr
                      ? qual
                      : reinterpret_cast<Node *>(make_andclause(list_make2(from->quals, qual)));
    read.view->hasSubLinks = true;
    return window_from(copy_node(static_cast<Node *>(lsecond(castNode(OpExpr, qual)->args))),
                       !descending);
}

}  // namespace tscoll::pg::reads
