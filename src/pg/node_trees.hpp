// PostgreSQL node trees from C++: PostgreSQL 15 declares tree walkers and
// mutators without parameters, and copyObject with typeof; C++ needs these
// spelled out.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/nodes.h"
#include "nodes/pg_list.h"
#include "nodes/plannodes.h"
}

namespace tscoll::pg {

template <typename Context>
auto walker(bool (*f)(Node *, Context *)) {
    return reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(f));
}

template <typename Context>
auto mutator(Node *(*f)(Node *, Context *)) {
    return reinterpret_cast<Node *(*)()>(reinterpret_cast<void (*)()>(f));
}

template <typename T>
T *copy_node(const T *node) {
    return static_cast<T *>(copyObjectImpl(node));
}

// Which child of its parent a plan is.
enum class ChildSide { Outer, Inner, Other };

// Calls f(Plan *&child, ChildSide) for each child slot of `plan`: its outer
// and inner trees (either may be null), then the plans of Append,
// MergeAppend, BitmapAnd, BitmapOr, SubqueryScan and CustomScan. f may
// replace the child.
template <typename F>
void for_each_child(Plan *plan, F &&f) {
    f(plan->lefttree, ChildSide::Outer);
    f(plan->righttree, ChildSide::Inner);
    List *children = NIL;
    switch (nodeTag(plan)) {
        case T_Append:
            children = reinterpret_cast<Append *>(plan)->appendplans;
            break;
        case T_MergeAppend:
            children = reinterpret_cast<MergeAppend *>(plan)->mergeplans;
            break;
        case T_BitmapAnd:
            children = reinterpret_cast<BitmapAnd *>(plan)->bitmapplans;
            break;
        case T_BitmapOr:
            children = reinterpret_cast<BitmapOr *>(plan)->bitmapplans;
            break;
        case T_CustomScan:
            children = reinterpret_cast<CustomScan *>(plan)->custom_plans;
            break;
        case T_SubqueryScan:
            f(reinterpret_cast<SubqueryScan *>(plan)->subplan, ChildSide::Other);
            return;
        default:
            return;
    }
    ListCell *lc;
    foreach (lc, children)
        f(*reinterpret_cast<Plan **>(&lfirst(lc)), ChildSide::Other);
}

}  // namespace tscoll::pg
