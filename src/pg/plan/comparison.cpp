#include "pg/plan/comparison.hpp"

extern "C" {
#include "access/stratnum.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
}

namespace tscoll::pg {

bool is_bound(Node *expr) {
    return !contain_var_clause(expr) && !contain_volatile_functions(expr) &&
           !checkExprHasSubLink(expr);
}

int commute(int strategy) {
    return BTMaxStrategyNumber + 1 - strategy;  // < <= = >= > mirrored
}

bool as_comparison(Node *node, Comparison *c) {
    return as_comparison_with(
        node, c, [](Node *side, const void *) { return is_bound(side); }, nullptr);
}

bool as_comparison_with(Node *node, Comparison *c, bool (*bound)(Node *, const void *),
                        const void *context) {
    if (!IsA(node, OpExpr) || list_length(castNode(OpExpr, node)->args) != 2)
        return false;
    OpExpr *op = castNode(OpExpr, node);
    Node *left = static_cast<Node *>(linitial(op->args));
    Node *right = static_cast<Node *>(lsecond(op->args));
    bool bound_right = bound(right, context);
    if (!bound_right && !bound(left, context))
        return false;
    List *meanings = get_op_btree_interpretation(op->opno);
    ListCell *lc;
    foreach (lc, meanings) {
        auto *m = static_cast<OpBtreeInterpretation *>(lfirst(lc));
        if (m->strategy < BTLessStrategyNumber || m->strategy > BTGreaterStrategyNumber)
            continue;
        *c = Comparison{bound_right ? left : right, bound_right ? right : left,
                        bound_right ? m->strategy : commute(m->strategy), m->opfamily_id,
                        bound_right ? m->oplefttype : m->oprighttype};
        return true;
    }
    return false;
}

}  // namespace tscoll::pg
