// The time merge: returns the view's rows in time order without sorting
// them all first (doc/REFERENCE.md §3.4, SELECT; doc/ARCHITECTURE.md,
// Time merge).
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

void register_time_merge();

// Puts a time merge in place of every Sort whose first key is the time of
// the measurements an unpack scan returns, directly below it. Call after
// use_unpack_scans.
void use_time_merges(PlannedStmt *stmt);

}  // namespace tscoll::pg
