#include "pg/plan/comparison.hpp"

extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_coerce.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "parser/scansup.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
}

#include <initializer_list>
#include <optional>
#include <utility>

#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/node_trees.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg {

bool is_bound(Node *expr) {
    return !contain_var_clause(expr) && !contain_volatile_functions(expr) &&
           !checkExprHasSubLink(expr);
}

int commute(int strategy) {
    return BTMaxStrategyNumber + 1 - strategy;  // < <= = >= > mirrored
}

bool as_comparison(Node *node, Comparison *c) {
    if (!IsA(node, OpExpr) || list_length(castNode(OpExpr, node)->args) != 2)
        return false;
    OpExpr *op = castNode(OpExpr, node);
    Node *left = static_cast<Node *>(linitial(op->args));
    Node *right = static_cast<Node *>(lsecond(op->args));
    bool bound_right = is_bound(right);
    if (!bound_right && !is_bound(left))
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
