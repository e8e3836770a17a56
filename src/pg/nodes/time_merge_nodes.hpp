// What the time merge's three files share (time_merge.hpp for the rest
// of tscoll): the node kinds, and how a node's input row reaches its scan
// slot.
#pragma once

extern "C" {
#include "postgres.h"
#include "executor/tuptable.h"
#include "nodes/extensible.h"
}

namespace tscoll::pg::time_merge {

// Custom scans: the merge (time_merge_exec.cpp) and, below it in a
// parallel plan, the bucket claim (time_merge_claim.cpp); the planning
// (time_merge_plan.cpp) makes both.
extern const CustomScanMethods kMergeMethods;
extern const CustomScanMethods kClaimMethods;

// `from`'s row in the scan slot `to`, which is virtual, as
// ExecInitCustomScan made it and the expressions reading it expect: it
// points into `from`'s row, valid while `from` holds it.
TupleTableSlot *store_virtual(TupleTableSlot *to, TupleTableSlot *from);

}  // namespace tscoll::pg::time_merge
