// The bucket claim of the time merge (time_merge_exec.cpp), in parallel
// plans. This file holds no C++ object with a destructor: the executor
// callbacks call PostgreSQL directly.
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

using tscoll::pg::time_merge::store_virtual;

// ---------------------------------------------------------------------------
// The bucket claim, below the merge of a parallel plan: every participant
// reads all the buckets in the same order, and returns those it claims
// from a counter they share, one at a time. Each participant's buckets
// stay in bound order, and none takes them all before the others start.

struct ClaimShared {
    pg_atomic_uint64 next;  // the position of the next bucket to claim
};

struct ClaimState {
    CustomScanState css;
    PlanState *buckets;
    ClaimShared *shared;  // nullptr outside a parallel query: all are ours
    uint64 position;      // of the next bucket read
    uint64 claimed;       // the position claimed, when has_claim
    bool has_claim;
};

void begin_claim(CustomScanState *node, EState *estate, int eflags) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    auto *plan = reinterpret_cast<CustomScan *>(node->ss.ps.plan);
    claim->buckets =
        ExecInitNode(static_cast<Plan *>(linitial(plan->custom_plans)), estate, eflags);
    node->custom_ps = list_make1(claim->buckets);
}

TupleTableSlot *exec_claim(CustomScanState *node) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    TupleTableSlot *result = node->ss.ss_ScanTupleSlot;
    ExecClearTuple(result);
    for (;;) {
        if (!claim->has_claim) {
            claim->claimed = claim->shared != nullptr
                                 ? pg_atomic_fetch_add_u64(&claim->shared->next, 1)
                                 : claim->position;
            claim->has_claim = true;
        }
        TupleTableSlot *bucket = ExecProcNode(claim->buckets);
        if (TupIsNull(bucket))
            return result;
        if (claim->position++ != claim->claimed)
            continue;
        claim->has_claim = false;
        return store_virtual(result, bucket);
    }
}

void rescan_claim(CustomScanState *node) {
    auto *claim = reinterpret_cast<ClaimState *>(node);
    claim->position = 0;
    claim->has_claim = false;
    if (node->ss.ps.chgParam != nullptr)
        UpdateChangedParamSet(claim->buckets, node->ss.ps.chgParam);
    if (claim->buckets->chgParam == nullptr)
        ExecReScan(claim->buckets);
}

void end_claim(CustomScanState *node) {
    ExecClearTuple(node->ss.ss_ScanTupleSlot);
    ExecEndNode(reinterpret_cast<ClaimState *>(node)->buckets);
}

Size estimate_claim(CustomScanState *, ParallelContext *) {
    return sizeof(ClaimShared);
}

void initialize_claim(CustomScanState *node, ParallelContext *, void *coordinate) {
    auto *shared = static_cast<ClaimShared *>(coordinate);
    pg_atomic_init_u64(&shared->next, 0);
    reinterpret_cast<ClaimState *>(node)->shared = shared;
}

void reinitialize_claim(CustomScanState *node, ParallelContext *, void *coordinate) {
    pg_atomic_write_u64(&static_cast<ClaimShared *>(coordinate)->next, 0);
}

void initialize_claim_worker(CustomScanState *node, shm_toc *, void *coordinate) {
    reinterpret_cast<ClaimState *>(node)->shared = static_cast<ClaimShared *>(coordinate);
}

void explain_claim(CustomScanState *, List *, ExplainState *es) {
    ExplainPropertyText("Buckets Claimed", "one at a time by each participant, in bound order", es);
}

Node *create_claim_state(CustomScan *plan);

const CustomExecMethods kClaimExecMethods = {
    "TscollBucketClaim",
    begin_claim,
    exec_claim,
    end_claim,
    rescan_claim,
    nullptr,
    nullptr,
    estimate_claim,
    initialize_claim,
    reinitialize_claim,
    initialize_claim_worker,
    nullptr,
    explain_claim,
};

Node *create_claim_state(CustomScan *plan) {
    auto *claim = static_cast<ClaimState *>(palloc0(sizeof(ClaimState)));
    NodeSetTag(claim, T_CustomScanState);
    claim->css.methods = &kClaimExecMethods;
    return reinterpret_cast<Node *>(claim);
}

}  // namespace

namespace tscoll::pg::time_merge {

const CustomScanMethods kClaimMethods = {"TscollBucketClaim", create_claim_state};

}  // namespace tscoll::pg::time_merge
