// Collections distributed with Citus (doc/ARCHITECTURE.md, Scale-out).
#pragma once
extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

// A copy of a DROP VIEW that names a distributed collection's view, made
// IF EXISTS for the workers, or nullptr.
PlannedStmt *drop_of_distributed_views(PlannedStmt *pstmt);

}  // namespace tscoll::pg
