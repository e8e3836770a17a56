#include "pg/dml/copy_to.hpp"

extern "C" {
#include "postgres.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "utils/lsyscache.h"
}

#include "pg/write/bucket_store.hpp"
#include "pg/guard.hpp"

namespace {

// COPY <collection> [(columns)] TO ...
bool copies_collection_out(Node *stmt) {
    if (!IsA(stmt, CopyStmt))
        return false;
    CopyStmt *copy = castNode(CopyStmt, stmt);
    if (copy->is_from || copy->relation == nullptr)
        return false;
    Oid relid = RangeVarGetRelid(copy->relation, NoLock, true);
    if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_VIEW)
        return false;
    return tscoll::pg::guarded([&] { return tscoll::pg::find_collection(relid).has_value(); });
}

ResTarget *column_target(Node *column) {
    ResTarget *target = makeNode(ResTarget);
    ColumnRef *ref = makeNode(ColumnRef);
    ref->fields = list_make1(column);
    ref->location = -1;
    target->val = reinterpret_cast<Node *>(ref);
    target->location = -1;
    return target;
}

// The same COPY with SELECT <columns or *> FROM <collection> as its query.
PlannedStmt *as_query_copy(const PlannedStmt *pstmt) {
    PlannedStmt *result = static_cast<PlannedStmt *>(copyObjectImpl(pstmt));
    CopyStmt *copy = castNode(CopyStmt, result->utilityStmt);
    SelectStmt *select = makeNode(SelectStmt);
    ListCell *lc;
    foreach (lc, copy->attlist)
        select->targetList =
            lappend(select->targetList, column_target(static_cast<Node *>(lfirst(lc))));
    if (copy->attlist == NIL)
        select->targetList = list_make1(column_target(reinterpret_cast<Node *>(makeNode(A_Star))));
    select->fromClause = list_make1(copy->relation);
    copy->query = reinterpret_cast<Node *>(select);
    copy->relation = nullptr;
    copy->attlist = NIL;
    return result;
}

}  // namespace

namespace tscoll::pg {

PlannedStmt *copy_to_as_query(PlannedStmt *pstmt) {
    return copies_collection_out(pstmt->utilityStmt) ? as_query_copy(pstmt) : nullptr;
}

}  // namespace tscoll::pg
