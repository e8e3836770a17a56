#include "pg/plan/typed_columns.hpp"

extern "C" {
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
}

#include "pg/node_trees.hpp"

namespace tscoll::pg {

namespace {

struct TypedColumns {
    Index rti;
    AttrNumber doc_column;
    List *targetlist;
    int levels;  // query levels below the one of rti
};

// The definition's own Var (the unpacked doc) becomes the view's doc
// column at `levels` up.
Node *doc_in_place(Node *node, TypedColumns *t) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Var))
        return reinterpret_cast<Node *>(
            makeVar(t->rti, t->doc_column, JSONBOID, -1, InvalidOid, t->levels));
    return expression_tree_mutator(node, mutator(doc_in_place), t);
}

Node *typed_column(Var *v, TypedColumns *t) {
    if (v->varattno <= t->doc_column || v->varattno > list_length(t->targetlist))
        return nullptr;
    TargetEntry *te = list_nth_node(TargetEntry, t->targetlist, v->varattno - 1);
    return doc_in_place(reinterpret_cast<Node *>(copy_node(te->expr)), t);
}

Node *through_doc(Node *node, TypedColumns *t) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (static_cast<Index>(v->varno) == t->rti &&
            v->varlevelsup == static_cast<Index>(t->levels))
            if (Node *definition = typed_column(v, t))
                return definition;
        return node;
    }
    if (IsA(node, Query)) {
        t->levels++;
        Query *q = query_tree_mutator(castNode(Query, node), mutator(through_doc), t, 0);
        t->levels--;
        return reinterpret_cast<Node *>(q);
    }
    return expression_tree_mutator(node, mutator(through_doc), t);
}

}  // namespace

bool read_typed_columns_through_doc(Query *query, Index rti, AttrNumber doc_column,
                                    List *view_targetlist) {
    if (doc_column == 0 || list_length(view_targetlist) <= doc_column)
        return false;
    TypedColumns t = {rti, doc_column, view_targetlist, 0};
    query_tree_mutator(query, mutator(through_doc), &t, QTW_DONT_COPY_QUERY);
    return true;
}

}  // namespace tscoll::pg
