// A condition `x <op> bound` with a btree operator: what the planning of
// reads (bucket pruning, time windows, aggregation in buckets) and the
// translation of DELETE (bucket conditions) both look for.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/primnodes.h"
}

namespace tscoll::pg {

struct Comparison {
    Node *subject;  // the side that is not the bound
    Node *bound;    // free of the query's columns, not volatile
    int strategy;   // BTLessStrategyNumber ..., as "subject <op> bound"
    Oid opfamily;
    Oid subject_type;
};

// Whether `expr` is known before a scan: no column of its query, nothing
// volatile, no subquery.
bool is_bound(Node *expr);

// The strategy of `b <op> a` for `a <op> b`.
int commute(int strategy);

// `node` as a btree comparison of something with a bound, else false.
bool as_comparison(Node *node, Comparison *c);
// The same with what `bound(side, context)` accepts as the bound.
bool as_comparison_with(Node *node, Comparison *c, bool (*bound)(Node *, const void *),
                        const void *context);

}  // namespace tscoll::pg
