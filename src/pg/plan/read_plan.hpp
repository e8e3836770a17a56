// Planning reads of collections: bucket pruning and lazy unpacking
// (doc/REFERENCE.md §3.4, SELECT).
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/parsenodes.h"
}

namespace tscoll::pg {

// Rewrites every read of a collection view in `parse`, before planning.
void plan_collection_reads(Query *parse);

}  // namespace tscoll::pg
