// Subqueries that only name a collection's columns (a user's view on the
// collection, `FROM (SELECT time, (doc->>'f')::float8 AS f FROM c) r`, a
// CTE read once) are merged into the query that reads them before the
// collection's reads are planned. PostgreSQL's planner merges them too,
// but after the planner hook: without this step, the rewrites would see
// the view alone in the subquery, and the conditions, grouping and
// ordering of the query above it out of their reach (no pruning by the
// query's time, no aggregation in buckets, no time merge).
//
// The merge is PostgreSQL's own pull-up of a simple subquery, for the one
// shape that matters here: a subquery reading one collection view with a
// target list and a WHERE and nothing else, not on the nullable side of an
// outer join. Anything else is left for PostgreSQL.
//
// This file holds no C++ object with a destructor: it calls PostgreSQL
// directly (see guard.hpp).
extern "C" {
#include "postgres.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
}

#include "pg/plan/collection_read.hpp"

namespace tscoll::pg::reads {

namespace {

// The collection view a subquery projects, with a WHERE at most: its range
// table entry, else 0. The other entries of its range table are outside
// its FROM: the *OLD* and *NEW* entries of a view's query, which carry the
// permission checks of the view itself, and subqueries merged into it.
// Nothing volatile: merged, its WHERE would run once per row of the
// query's joins, not of the view (inline_cte refuses such CTEs too).
Index projected_view(Query *subquery) {
    if (subquery->commandType != CMD_SELECT || subquery->hasAggs || subquery->hasWindowFuncs ||
        subquery->hasTargetSRFs || subquery->hasSubLinks || subquery->hasDistinctOn ||
        subquery->hasRecursive || subquery->hasModifyingCTE || subquery->hasForUpdate ||
        subquery->hasRowSecurity || subquery->cteList != NIL || subquery->groupClause != NIL ||
        subquery->groupingSets != NIL || subquery->havingQual != nullptr ||
        subquery->windowClause != NIL || subquery->distinctClause != NIL ||
        subquery->sortClause != NIL || subquery->limitOffset != nullptr ||
        subquery->limitCount != nullptr || subquery->rowMarks != NIL ||
        subquery->setOperations != nullptr || list_length(subquery->jointree->fromlist) != 1 ||
        !IsA(linitial(subquery->jointree->fromlist), RangeTblRef) ||
        contain_volatile_functions(reinterpret_cast<Node *>(subquery)))
        return 0;
    auto view =
        static_cast<Index>(linitial_node(RangeTblRef, subquery->jointree->fromlist)->rtindex);
    CollectionRead read;
    return recognise(subquery, view, &read) ? view : 0;
}

// A CTE that PostgreSQL would inline (inline_cte's conditions, for a CTE of
// this query level read once) and that projects one collection view: its
// reference becomes the subquery PostgreSQL would make of it.
void inline_cte_reference(Query *query, RangeTblEntry *rte) {
    if (rte->rtekind != RTE_CTE || rte->ctelevelsup != 0 || rte->self_reference)
        return;
    ListCell *lc;
    foreach (lc, query->cteList) {
        auto *cte = lfirst_node(CommonTableExpr, lc);
        if (strcmp(cte->ctename, rte->ctename) != 0)
            continue;
        auto *body = castNode(Query, cte->ctequery);
        merge_view_subqueries(body);  // a CTE reading a view on the collection
        if (cte->cterefcount != 1 || cte->cterecursive ||
            cte->ctematerialized == CTEMaterializeAlways || projected_view(body) == 0)
            return;
        rte->rtekind = RTE_SUBQUERY;
        rte->subquery = static_cast<Query *>(copyObjectImpl(body));
        rte->security_barrier = false;
        rte->ctename = nullptr;
        rte->ctelevelsup = 0;
        rte->self_reference = false;
        rte->coltypes = rte->coltypmods = rte->colcollations = NIL;
        cte->cterefcount = 0;  // PostgreSQL plans no CTE nobody reads
        return;
    }
}

// Whether `rti` is joined to the rest of the query by inner joins only.
bool inner_joined(Node *node, Index rti, bool inner) {
    if (node == nullptr)
        return false;
    if (IsA(node, RangeTblRef))
        return inner && castNode(RangeTblRef, node)->rtindex == static_cast<int>(rti);
    if (IsA(node, FromExpr)) {
        ListCell *lc;
        foreach (lc, castNode(FromExpr, node)->fromlist)
            if (inner_joined(static_cast<Node *>(lfirst(lc)), rti, inner))
                return true;
        return false;
    }
    if (IsA(node, JoinExpr)) {
        auto *join = castNode(JoinExpr, node);
        inner = inner && join->jointype == JOIN_INNER;
        return inner_joined(join->larg, rti, inner) || inner_joined(join->rarg, rti, inner);
    }
    return false;
}

// Replaces the reference to `rti` in the join tree by `by`.
void replace_reference(Node *node, Index rti, Index by) {
    if (IsA(node, RangeTblRef)) {
        if (castNode(RangeTblRef, node)->rtindex == static_cast<int>(rti))
            castNode(RangeTblRef, node)->rtindex = static_cast<int>(by);
    } else if (IsA(node, FromExpr)) {
        ListCell *lc;
        foreach (lc, castNode(FromExpr, node)->fromlist)
            replace_reference(static_cast<Node *>(lfirst(lc)), rti, by);
    } else if (IsA(node, JoinExpr)) {
        replace_reference(castNode(JoinExpr, node)->larg, rti, by);
        replace_reference(castNode(JoinExpr, node)->rarg, rti, by);
    }
}

// As pull_up_simple_subquery: the subquery's range table is appended to the
// query's, the query's references to the subquery's columns become the
// subquery's expressions, and its WHERE joins the query's. The subquery's
// own entry stays, unreferenced, as PostgreSQL leaves a subquery it pulled
// up.
void merge_subquery(Query *query, Index rti, Index view) {
    RangeTblEntry *rte = rt_fetch(rti, query->rtable);
    auto *subquery = static_cast<Query *>(copyObjectImpl(rte->subquery));
    int offset = list_length(query->rtable);
    OffsetVarNodes(reinterpret_cast<Node *>(subquery), offset, 0);
    IncrementVarSublevelsUp(reinterpret_cast<Node *>(subquery), -1, 1);
    Node *replaced = ReplaceVarsFromTargetList(reinterpret_cast<Node *>(query),
                                               static_cast<int>(rti), 0, rte, subquery->targetList,
                                               REPLACEVARS_REPORT_ERROR, 0, &query->hasSubLinks);
    *query = *castNode(Query, replaced);
    query->rtable = list_concat(query->rtable, subquery->rtable);
    replace_reference(reinterpret_cast<Node *>(query->jointree), rti, offset + view);
    if (subquery->jointree->quals != nullptr)
        query->jointree->quals = make_and_qual(query->jointree->quals, subquery->jointree->quals);
}

}  // namespace

void merge_view_subqueries(Query *query) {
    // A MERGE's WHERE is its ON condition, which PostgreSQL turns into an
    // outer join's: a source's WHERE must not join it.
    if (query->commandType == CMD_MERGE || query->rowMarks != NIL || query->groupingSets != NIL ||
        query->setOperations != nullptr)
        return;
    // Entries a merge appends are the merged subqueries' own: not visited.
    auto entries = static_cast<Index>(list_length(query->rtable));
    for (Index rti = 1; rti <= entries; rti++) {
        RangeTblEntry *rte = rt_fetch(rti, query->rtable);
        if (rte->lateral || !inner_joined(reinterpret_cast<Node *>(query->jointree), rti, true))
            continue;
        inline_cte_reference(query, rte);
        if (rte->rtekind != RTE_SUBQUERY || rte->security_barrier || rte->tablesample != nullptr)
            continue;
        merge_view_subqueries(rte->subquery);  // a view on a view on the collection
        if (Index view = projected_view(rte->subquery); view != 0)
            merge_subquery(query, rti, view);
    }
}

}  // namespace tscoll::pg::reads
