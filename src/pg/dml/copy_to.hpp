// COPY <collection> TO: what PostgreSQL refuses for any view (42809), run
// as COPY (SELECT ... FROM <collection>) TO, the form users write next.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

// For the utility hook: a copy of `pstmt` that copies from the query, when
// it is a COPY of a collection's view TO somewhere; else nullptr.
PlannedStmt *copy_to_as_query(PlannedStmt *pstmt);

}  // namespace tscoll::pg
