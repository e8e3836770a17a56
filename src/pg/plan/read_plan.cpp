// Planning reads of collections (doc/REFERENCE.md §3.4, SELECT;
// doc/ARCHITECTURE.md, Reading).
// Before PostgreSQL plans a query, every collection view it reads is
// rewritten:
//
//  * Bucket pruning: the query's conditions on the view's time column, on
//    meta subfields and on measurement fields become conditions on the
//    bucket rows (min_time, max_time, meta, control), added to the view's
//    own WHERE. PostgreSQL then evaluates them like any condition: through
//    the bucket table's indexes, with parameters, now() and stable
//    expressions at execution time. Meta conditions themselves already run
//    once per bucket: the view's meta column is the bucket row's.
//  * Last points: DISTINCT ON (meta ...) ORDER BY ..., time DESC reads only
//    each series' latest bucket and its latest measurement.
//  * Lazy unpacking: when the query reads doc only as doc->>'f', doc->'f'
//    or (doc->>'f')::float8 with constant keys, _unpack becomes
//    _unpack_fields, which decodes only those fields, and each such
//    expression reads its column; with neither time nor doc read,
//    _bucket_slots counts control.count rows.
//  * Aggregation in buckets (read_aggregate.cpp): max/min/sum/avg/count of
//    (doc->>'f')::float8 by date_trunc(unit, time) and meta become partial
//    aggregates per bucket (_unpack_groups), combined by the query; ORDER
//    BY the time group DESC LIMIT k reads only the buckets that reach the
//    k-th latest.
//
// This file holds no C++ object with a destructor: it calls PostgreSQL
// directly (see guard.hpp).
#include "pg/plan/read_plan.hpp"

extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
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
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

#include <initializer_list>
#include <optional>
#include <utility>

#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/plan/collection_read.hpp"
#include "pg/plan/typed_columns.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/read/unpack_call.hpp"
#include "pg/node_trees.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg::reads {

const char *const_text(Node *node) {
    if (node == nullptr || !IsA(node, Const) || castNode(Const, node)->constisnull ||
        castNode(Const, node)->consttype != TEXTOID)
        return nullptr;
    return TextDatumGetCString(castNode(Const, node)->constvalue);
}

// schema.name, as the parser's name lists have it.
List *qualified(const char *schema, const char *name) {
    return list_make2(makeString(pstrdup(schema)), makeString(pstrdup(name)));
}

Oid tscoll_function(const char *name, int nargs, const Oid *types) {
    return LookupFuncName(qualified("tscoll", name), nargs, types, true);
}

bool is_tscoll_function(Oid funcid, const char *name, int nargs) {
    Oid ns = get_func_namespace(funcid);
    const char *ns_name = OidIsValid(ns) ? get_namespace_name(ns) : nullptr;
    return ns_name != nullptr && strcmp(ns_name, "tscoll") == 0 &&
           strcmp(get_func_name(funcid), name) == 0 && get_func_nargs(funcid) == nargs;
}

FuncExpr *unpack_call(RangeTblEntry *rte) {
    if (rte->rtekind != RTE_FUNCTION || list_length(rte->functions) != 1)
        return nullptr;
    Node *expr = linitial_node(RangeTblFunction, rte->functions)->funcexpr;
    if (!IsA(expr, FuncExpr) || !is_tscoll_function(castNode(FuncExpr, expr)->funcid, "_unpack", 5))
        return nullptr;
    return castNode(FuncExpr, expr);
}

bool recognise(Query *query, Index rti, CollectionRead *read) {
    RangeTblEntry *rte = rt_fetch(rti, query->rtable);
    if (rte->rtekind != RTE_SUBQUERY || rte->subquery == nullptr)
        return false;
    Query *view = rte->subquery;
    *read = CollectionRead{query, rti, view, 0, 0, 0, 0, 0, InvalidOid};
    for (Index i = 1; i <= static_cast<Index>(list_length(view->rtable)); i++) {
        FuncExpr *call = unpack_call(rt_fetch(i, view->rtable));
        if (call == nullptr || !IsA(linitial(call->args), Var))
            continue;
        read->unpack_rti = i;
        read->bucket_rti = linitial_node(Var, call->args)->varno;
    }
    if (read->unpack_rti == 0 || read->bucket_rti == 0 ||
        read->bucket_rti > static_cast<Index>(list_length(view->rtable)))
        return false;
    RangeTblEntry *buckets = rt_fetch(read->bucket_rti, view->rtable);
    if (buckets->rtekind != RTE_RELATION)
        return false;
    read->bucket_table = buckets->relid;
    ListCell *lc;
    AttrNumber bucket_meta = get_attnum(read->bucket_table, "meta");
    foreach (lc, view->targetList) {
        TargetEntry *te = lfirst_node(TargetEntry, lc);
        if (!IsA(te->expr, Var))
            continue;
        Index varno = castNode(Var, te->expr)->varno;
        AttrNumber attno = castNode(Var, te->expr)->varattno;
        if (varno == read->bucket_rti && attno == bucket_meta)
            read->meta_column = te->resno;
        if (varno != read->unpack_rti)
            continue;
        if (attno == 1)
            read->time_column = te->resno;
        else if (attno == 2)
            read->doc_column = te->resno;
    }
    return read->time_column != 0;
}

// ---------------------------------------------------------------------------
// Time windows.

// The time window of _unpack and _unpack_fields: (lower, lower_strict, upper, upper_strict),
// at the view's level; NULL strictness for a side without a bound.
List *unbounded_window() {
    auto *no_bound = reinterpret_cast<Node *>(makeNullConst(TIMESTAMPTZOID, -1, InvalidOid));
    auto *no_strictness = reinterpret_cast<Node *>(makeNullConst(BOOLOID, -1, InvalidOid));
    return list_make4(no_bound, no_strictness, copy_node(no_bound), copy_node(no_strictness));
}

// The window of the measurements at or after (upper: at or before) `bound`.
List *window_from(Node *bound, bool upper) {
    List *window = unbounded_window();
    list_nth_cell(window, upper ? 2 : 0)->ptr_value = bound;
    list_nth_cell(window, upper ? 3 : 1)->ptr_value = makeBoolConst(false, false);
    return window;
}

// ---------------------------------------------------------------------------
// Lazy unpacking.

struct FieldUse {
    const CollectionRead *read;
    int levels;          // query levels below read->query
    int field_reads;     // doc->>'k' and doc->'k'
    int latest_reads;    // max(time)
    int earliest_reads;  // min(time)
    int other_aggregates;
    int other_uses;     // references to the column (or the whole row) of any other form
    List *keys;         // the fields' keys, as String nodes
    List *kinds;        // for each key: how _unpack_fields returns it (int list)
    List *collations;   // for each key: the collation of the expression (oid list)
    AttrNumber column;  // the view's column whose other uses are counted
};

// The other values of (doc->>'f')::float8 (kNotNumber) are text, cast
// where the query casts them.
using unpack_call::FieldKind;
using unpack_call::kJsonb;
using unpack_call::kNotNumber;
using unpack_call::kNumber;
using unpack_call::kText;

Oid kind_type(int kind) {
    if (Oid typed = typed_field_type(static_cast<char>(kind)); OidIsValid(typed))
        return typed;
    return kind == kJsonb ? JSONBOID : kind == kNumber ? FLOAT8OID : TEXTOID;
}

// A reference to the view's column for (key, kind), added when new.
Var *field_column(FieldUse *use, const char *key, char kind, Oid collation) {
    int i = 0;
    ListCell *k, *j;
    forboth(k, use->keys, j, use->kinds) {
        if (strcmp(strVal(lfirst(k)), key) == 0 && lfirst_int(j) == kind)
            break;
        i++;
    }
    if (i == list_length(use->keys)) {
        use->keys = lappend(use->keys, makeString(pstrdup(key)));
        use->kinds = lappend_int(use->kinds, kind);
        use->collations = lappend_oid(use->collations, collation);
    }
    AttrNumber column = list_length(use->read->view->targetList) + 1 + i;
    return makeVar(use->read->view_rti, column, kind_type(kind), -1, collation, use->levels);
}

const char *field_read(Node *node, FieldUse *use, bool *jsonb) {
    if (!IsA(node, OpExpr) || list_length(castNode(OpExpr, node)->args) != 2)
        return nullptr;
    OpExpr *op = castNode(OpExpr, node);
    Node *doc = static_cast<Node *>(linitial(op->args));
    if (!IsA(doc, Var) || static_cast<Index>(castNode(Var, doc)->varno) != use->read->view_rti ||
        castNode(Var, doc)->varlevelsup != static_cast<Index>(use->levels) ||
        castNode(Var, doc)->varattno != use->read->doc_column || !IsA(lsecond(op->args), Const))
        return nullptr;
    set_opfuncid(op);
    Const *key = lsecond_node(Const, op->args);
    if (key->constisnull || key->consttype != TEXTOID ||
        (op->opfuncid != F_JSONB_OBJECT_FIELD_TEXT && op->opfuncid != F_JSONB_OBJECT_FIELD))
        return nullptr;
    *jsonb = op->opfuncid == F_JSONB_OBJECT_FIELD;
    return TextDatumGetCString(key->constvalue);
}

// Whether `v`, a column of a join in the reading query, is the view's
// `column` (or could be: whole rows and merged columns count).
bool join_column_is(const CollectionRead &read, const Var *v, AttrNumber column) {
    RangeTblEntry *rte = rt_fetch(v->varno, read.query->rtable);
    if (rte->rtekind != RTE_JOIN)
        return false;
    if (v->varattno == 0)
        return true;
    Node *alias = static_cast<Node *>(list_nth(rte->joinaliasvars, v->varattno - 1));
    if (alias == nullptr || !IsA(alias, Var))
        return alias != nullptr;
    const Var *aliased = castNode(Var, alias);
    if (static_cast<Index>(aliased->varno) == read.view_rti)
        return aliased->varattno == column || aliased->varattno == 0;
    return join_column_is(read, aliased, column);
}

// Counts the uses of use->column other than doc->>'k' and doc->'k'.
bool count_other_uses(Node *node, FieldUse *use) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        use->levels++;
        bool result = query_tree_walker(castNode(Query, node), walker(count_other_uses), use, 0);
        use->levels--;
        return result;
    }
    bool jsonb = false;
    if (field_read(node, use, &jsonb) != nullptr) {
        use->field_reads++;
        return false;
    }
    if (IsA(node, Aggref)) {
        auto *agg = castNode(Aggref, node);
        bool end = (agg->aggfnoid == F_MAX_TIMESTAMPTZ || agg->aggfnoid == F_MIN_TIMESTAMPTZ) &&
                   agg->aggfilter == nullptr && list_length(agg->args) == 1 &&
                   IsA(linitial_node(TargetEntry, agg->args)->expr, Var);
        const Var *v = end ? castNode(Var, linitial_node(TargetEntry, agg->args)->expr) : nullptr;
        if (v != nullptr && static_cast<Index>(v->varno) == use->read->view_rti &&
            v->varattno == use->read->time_column &&
            v->varlevelsup == static_cast<Index>(use->levels)) {
            (agg->aggfnoid == F_MAX_TIMESTAMPTZ ? use->latest_reads : use->earliest_reads)++;
            return false;
        }
        use->other_aggregates++;
    }
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (v->varlevelsup != static_cast<Index>(use->levels))
            return false;
        if (static_cast<Index>(v->varno) == use->read->view_rti
                ? v->varattno == use->column || v->varattno == 0
                : join_column_is(*use->read, v, use->column))
            use->other_uses++;
        return false;
    }
    return expression_tree_walker(node, walker(count_other_uses), use);
}

// Replaces doc->>'f' and doc->'f' by the view's new column for f.
Node *read_field_columns(Node *node, FieldUse *use) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Query)) {
        use->levels++;
        Query *q = query_tree_mutator(castNode(Query, node), mutator(read_field_columns), use, 0);
        use->levels--;
        return reinterpret_cast<Node *>(q);
    }
    bool jsonb = false;
    char typed = 0;
    if (const char *key = typed_field_key(node, *use->read, &typed);
        key != nullptr && use->levels == 0)
        return reinterpret_cast<Node *>(field_column(use, key, typed, exprCollation(node)));
    if (IsA(node, CoerceViaIO) && castNode(CoerceViaIO, node)->resulttype == FLOAT8OID) {
        // COALESCE(number, other::float8): the cast still happens where the
        // query put it, so a value that does not cast fails only there.
        auto *cast = castNode(CoerceViaIO, node);
        const char *key = field_read(reinterpret_cast<Node *>(cast->arg), use, &jsonb);
        if (key != nullptr && !jsonb) {
            Var *number = field_column(use, key, kNumber, InvalidOid);
            CoerceViaIO *other = copy_node(cast);
            other->arg = reinterpret_cast<Expr *>(field_column(
                use, key, kNotNumber, exprCollation(reinterpret_cast<Node *>(cast->arg))));
            CoalesceExpr *either = makeNode(CoalesceExpr);
            either->coalescetype = FLOAT8OID;
            either->coalescecollid = InvalidOid;
            either->args = list_make2(number, other);
            either->location = -1;
            return reinterpret_cast<Node *>(either);
        }
    }
    if (const char *key = field_read(node, use, &jsonb))
        return reinterpret_cast<Node *>(
            field_column(use, key, jsonb ? kJsonb : kText, exprCollation(node)));
    return expression_tree_mutator(node, mutator(read_field_columns), use);
}

// tscoll.<name>(<the view's _unpack arguments>, <more>), or InvalidOid in a
// database whose tscoll predates it.
Oid unpack_variant(const CollectionRead &read, const char *name, std::initializer_list<Oid> more) {
    Oid types[FUNC_MAX_ARGS];
    int n = 0;
    ListCell *lc;
    foreach (lc, unpack_arguments(read))
        types[n++] = exprType(static_cast<Node *>(lfirst(lc)));
    for (Oid type : more)
        types[n++] = type;
    return tscoll_function(name, n, types);
}

// _unpack_fields(..., fields, <time window>).
Oid unpack_fields_function(const CollectionRead &read) {
    return unpack_variant(read, "_unpack_fields",
                          {TEXTARRAYOID, TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID, BOOLOID});
}

// The view's unpacking becomes `call`, which returns time, doc and then a
// column per name in `names`, of `types` and `collations`; the view gets a
// matching column each, after its own.
void replace_unpacking(const CollectionRead &read, FuncExpr *call, List *names, List *types,
                       List *collations) {
    RangeTblEntry *unpack = rt_fetch(read.unpack_rti, read.view->rtable);
    auto *function = linitial_node(RangeTblFunction, unpack->functions);
    call->funcretset = true;
    function->funcexpr = reinterpret_cast<Node *>(call);
    List *all_names = list_make2(makeString(pstrdup("time")), makeString(pstrdup("doc")));
    List *all_types = list_make2_oid(TIMESTAMPTZOID, JSONBOID);
    List *typmods = list_make2_int(-1, -1);
    List *all_collations = list_make2_oid(InvalidOid, InvalidOid);
    AttrNumber next_view_column = list_length(read.view->targetList) + 1;
    RangeTblEntry *view_rte = rt_fetch(read.view_rti, read.query->rtable);
    int i = 0;
    ListCell *n, *t, *c;
    forthree(n, names, t, types, c, collations) {
        const char *name = strVal(lfirst(n));
        all_names = lappend(all_names, makeString(pstrdup(name)));
        all_types = lappend_oid(all_types, lfirst_oid(t));
        typmods = lappend_int(typmods, -1);
        all_collations = lappend_oid(all_collations, lfirst_oid(c));
        Var *column = makeVar(read.unpack_rti, 3 + i++, lfirst_oid(t), -1, lfirst_oid(c), 0);
        read.view->targetList = lappend(read.view->targetList,
                                        makeTargetEntry(reinterpret_cast<Expr *>(column),
                                                        next_view_column++, pstrdup(name), false));
        view_rte->eref->colnames = lappend(view_rte->eref->colnames, makeString(pstrdup(name)));
    }
    function->funccolcount = list_length(all_names);
    function->funccolnames = all_names;
    function->funccoltypes = all_types;
    function->funccoltypmods = typmods;
    function->funccolcollations = all_collations;
    unpack->eref->colnames = list_copy(all_names);
}

// The arguments of the view's _unpack call.
List *unpack_arguments(const CollectionRead &read) {
    RangeTblEntry *unpack = rt_fetch(read.unpack_rti, read.view->rtable);
    return list_copy(
        castNode(FuncExpr, linitial_node(RangeTblFunction, unpack->functions)->funcexpr)->args);
}

Const *text_array(List *strings) {
    Datum *items = static_cast<Datum *>(palloc(sizeof(Datum) * (list_length(strings) + 1)));
    int i = 0;
    ListCell *lc;
    foreach (lc, strings)
        items[i++] = CStringGetTextDatum(strVal(lfirst(lc)));
    ArrayType *array = construct_array(items, i, TEXTOID, -1, false, TYPALIGN_INT);
    return makeConst(TEXTARRAYOID, -1, InvalidOid, -1, PointerGetDatum(array), false, false);
}

// The query's conditions (doc->>'f')::float8 <op> <float8 constant>, of a
// SELECT from the view alone, as _unpack_fields' filters ("<strategy><f>")
// and bounds: it may drop the measurements that cannot match before it
// builds their rows. The conditions stay in the query.
struct Prefilters {
    List *specs = NIL;   // String nodes
    List *bounds = NIL;  // Const float8
};

Prefilters prefilters_of(const CollectionRead &read) {
    Prefilters result;
    if (!selects_from_view_alone(read))
        return result;
    List *args = unpack_arguments(read);
    const char *time_field =
        const_text(static_cast<Node *>(list_nth(args, unpack_call::kTimeField)));
    const char *meta_field =
        const_text(static_cast<Node *>(list_nth(args, unpack_call::kMetaField)));
    if (time_field == nullptr)
        return result;
    ListCell *lc;
    foreach (lc, make_ands_implicit(reinterpret_cast<Expr *>(read.query->jointree->quals))) {
        Comparison c;
        if (!as_comparison(static_cast<Node *>(lfirst(lc)), &c))
            continue;
        // A float8 typed field's column: NULL for what is no number, so
        // dropping the numbers that fail is as safe as for the cast.
        char typed = 0;
        const char *key = typed_field_key(c.subject, read, &typed);
        if (key != nullptr && typed != static_cast<char>(TypedField::Float8))
            continue;
        if (key == nullptr && (!IsA(c.subject, CoerceViaIO) ||
                               castNode(CoerceViaIO, c.subject)->resulttype != FLOAT8OID))
            continue;
        // 90.0 is float8(90.0::numeric) until folded.
        c.bound = eval_const_expressions(nullptr, copy_node(c.bound));
        if (!IsA(c.bound, Const) || castNode(Const, c.bound)->consttype != FLOAT8OID ||
            castNode(Const, c.bound)->constisnull)
            continue;
        if (key == nullptr)
            key = field_key(reinterpret_cast<Node *>(castNode(CoerceViaIO, c.subject)->arg), read,
                            F_JSONB_OBJECT_FIELD_TEXT);
        // The time and meta fields read differently through doc (text, the
        // meta value): not a measurement column to test.
        if (key == nullptr || strcmp(key, time_field) == 0 ||
            (meta_field != nullptr && strcmp(key, meta_field) == 0))
            continue;
        result.specs = lappend(result.specs, makeString(psprintf("%d%s", c.strategy, key)));
        result.bounds = lappend(result.bounds, c.bound);
    }
    return result;
}

Const *float8_array(List *consts) {
    Datum *items = static_cast<Datum *>(palloc(sizeof(Datum) * (list_length(consts) + 1)));
    int i = 0;
    ListCell *lc;
    foreach (lc, consts)
        items[i++] = lfirst_node(Const, lc)->constvalue;
    ArrayType *array = construct_array(items, i, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, 'd');
    return makeConst(FLOAT8ARRAYOID, -1, InvalidOid, -1, PointerGetDatum(array), false, false);
}

// Bound c, moved into the view, at `side` of the window (0 lower, 2 upper).
void set_window_bound(List *window, int side, const Comparison &c) {
    Node *bound = copy_node(c.bound);
    IncrementVarSublevelsUp(bound, 1, 1);
    bool strict = c.strategy == BTLessStrategyNumber || c.strategy == BTGreaterStrategyNumber;
    list_nth_cell(window, side)->ptr_value = bound;
    list_nth_cell(window, side + 1)->ptr_value = makeBoolConst(strict, false);
}

// The query's top-level conditions time <op> <timestamptz bound>, at most
// one on each side, taken out of a SELECT from the view alone, as
// _unpack_fields' bounds: it then applies them, and builds nothing outside
// them. Out of the query, they no longer make the planner think that few of
// a bucket's measurements are within the time (it estimates a range on a
// function's column to keep 0.5%), which hid parallel plans and in-memory
// sorts.
List *take_time_window(const CollectionRead &read) {
    List *window = unbounded_window();
    if (!selects_from_view_alone(read))
        return window;
    bool has_lower = false, has_upper = false;
    List *kept = NIL;
    ListCell *lc;
    foreach (lc, make_ands_implicit(reinterpret_cast<Expr *>(read.query->jointree->quals))) {
        Comparison c;
        if (as_comparison(static_cast<Node *>(lfirst(lc)), &c) &&
            is_column(c.subject, read, read.time_column) && c.subject_type == TIMESTAMPTZOID &&
            exprType(c.bound) == TIMESTAMPTZOID) {
            bool lower = c.strategy >= BTEqualStrategyNumber;
            bool upper = c.strategy <= BTEqualStrategyNumber;
            if (!(lower && has_lower) && !(upper && has_upper)) {
                if (lower)
                    set_window_bound(window, 0, c), has_lower = true;
                if (upper)
                    set_window_bound(window, 2, c), has_upper = true;
                continue;
            }
        }
        kept = lappend(kept, lfirst(lc));
    }
    read.query->jointree->quals =
        kept == NIL ? nullptr : reinterpret_cast<Node *>(make_ands_explicit(kept));
    return window;
}

void unpack_fields(const CollectionRead &read, const FieldUse &use, Oid fn, List *window,
                   const Prefilters &prefilters) {
    List *specs = NIL;
    List *types = NIL;
    ListCell *k, *j;
    forboth(k, use.keys, j, use.kinds) {
        specs = lappend(specs, makeString(psprintf("%c%s", lfirst_int(j), strVal(lfirst(k)))));
        types = lappend_oid(types, kind_type(lfirst_int(j)));
    }
    List *args = unpack_arguments(read);
    args = lappend(args, text_array(specs));
    args = list_concat(args, window);
    Oid arg_types[12];
    int n = 0;
    ListCell *lc;
    foreach (lc, args)
        arg_types[n++] = exprType(static_cast<Node *>(lfirst(lc)));
    arg_types[10] = TEXTARRAYOID;
    arg_types[11] = FLOAT8ARRAYOID;
    Oid filtering =
        prefilters.specs != NIL ? tscoll_function("_unpack_fields", 12, arg_types) : InvalidOid;
    if (OidIsValid(filtering)) {
        fn = filtering;
        args = lappend(args, text_array(prefilters.specs));
        args = lappend(args, float8_array(prefilters.bounds));
    }
    FuncExpr *call =
        makeFuncExpr(fn, RECORDOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
    replace_unpacking(read, call, use.keys, types, use.collations);
}

// The view unpacks each bucket with tscoll.<function>(<arguments>) instead:
// a function returning (time, doc) rows.
void unpack_with(const CollectionRead &read, const char *function_name, List *args) {
    Oid types[FUNC_MAX_ARGS];
    int n = 0;
    ListCell *lc;
    foreach (lc, args) {
        if (lfirst(lc) == nullptr)
            return;
        types[n++] = exprType(static_cast<Node *>(lfirst(lc)));
    }
    Oid fn = tscoll_function(function_name, n, types);
    if (!OidIsValid(fn))
        return;
    RangeTblEntry *unpack = rt_fetch(read.unpack_rti, read.view->rtable);
    auto *function = linitial_node(RangeTblFunction, unpack->functions);
    FuncExpr *call =
        makeFuncExpr(fn, RECORDOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
    call->funcretset = true;
    function->funcexpr = reinterpret_cast<Node *>(call);
}

// The time window of a read: `window` when given (NIL: none), else the
// query's time conditions, taken out of it.
List *time_window(const CollectionRead &read, List *window) {
    return window != NIL ? window : take_time_window(read);
}

// A query that reads whole documents: _unpack builds only those within the
// time window that may pass the prefilters.
void unpack_within_window(const CollectionRead &read, List *window, const Prefilters &prefilters) {
    if (!OidIsValid(
            unpack_variant(read, "_unpack", {TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID, BOOLOID})))
        return;
    List *args = list_concat(unpack_arguments(read), time_window(read, window));
    if (prefilters.specs != NIL &&
        OidIsValid(unpack_variant(
            read, "_unpack",
            {TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID, BOOLOID, TEXTARRAYOID, FLOAT8ARRAYOID}))) {
        args = lappend(args, text_array(prefilters.specs));
        args = lappend(args, float8_array(prefilters.bounds));
    }
    unpack_with(read, "_unpack", args);
}

// `window` (NIL: the query's time conditions): no measurement outside it is
// built; for the last points, each bucket's max_time onwards, for the first
// points, the measurements up to or from their bound.
void unpack_only_used_fields(CollectionRead read, List *window) {
    Oid fn = unpack_fields_function(read);
    if (read.doc_column == 0 || !OidIsValid(fn))
        return;
    FieldUse use = {&read, 0, 0, 0, 0, 0, 0, NIL, NIL, NIL, read.doc_column};
    query_tree_walker(read.query, walker(count_other_uses), &use, QTW_IGNORE_JOINALIASES);
    if (use.other_uses > 0) {
        unpack_within_window(read, window, prefilters_of(read));
        return;
    }
    FieldUse time_use = {&read, 0, 0, 0, 0, 0, 0, NIL, NIL, NIL, read.time_column};
    query_tree_walker(read.query, walker(count_other_uses), &time_use, QTW_IGNORE_JOINALIASES);
    // count(*), meta only: how many measurements each bucket holds.
    if (use.field_reads == 0 && time_use.other_uses == 0 && time_use.latest_reads == 0 &&
        time_use.earliest_reads == 0) {
        unpack_with(read, "_bucket_slots", list_make1(bucket_column(read, "control")));
        return;
    }
    if (use.field_reads == 0 && time_use.other_uses == 0 && time_use.other_aggregates == 0 &&
        selects_by_meta_only(read)) {
        if (time_use.earliest_reads == 0) {
            // max(time) alone: a row per bucket, its latest time, exact in control.
            unpack_with(read, "_bucket_latest", list_make1(latest_time(read)));
        } else {
            // min(time): control.min is rounded down, so each bucket's times
            // are decoded, and only its earliest and latest become rows.
            List *args = unpack_arguments(read);
            unpack_with(read, "_bucket_ends",
                        list_make3(linitial(args), lthird(args), lfourth(args)));
        }
        return;
    }
    Prefilters prefilters = prefilters_of(read);
    query_tree_mutator(read.query, mutator(read_field_columns), &use,
                       QTW_DONT_COPY_QUERY | QTW_IGNORE_JOINALIASES);
    // The mutator copied the range table; find the view again.
    if (!recognise(read.query, read.view_rti, &read))
        elog(ERROR, "tscoll: lost the collection view while planning");
    unpack_fields(read, use, fn, time_window(read, window), prefilters);
}

bool plan_reads_in(Node *node, void *context);

void plan_query_reads(Query *query) {
    merge_view_subqueries(query);
    for (Index rti = 1; rti <= static_cast<Index>(list_length(query->rtable)); rti++) {
        CollectionRead read;
        if (!recognise(query, rti, &read))
            continue;
        if (read_typed_columns_through_doc(query, rti, read.doc_column, read.view->targetList) &&
            !recognise(query, rti, &read))
            elog(ERROR, "tscoll: lost the collection view while planning");
        add_bucket_conditions(read);
        List *window = read_last_points_only(read) ? window_from(latest_time(read), false)
                                                   : read_first_points_only(read);
        if (!aggregate_in_buckets(read))
            unpack_only_used_fields(read, window);
    }
}

bool plan_reads_in(Node *node, void *context) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        plan_query_reads(castNode(Query, node));
        return query_tree_walker(castNode(Query, node), walker(plan_reads_in), context, 0);
    }
    return expression_tree_walker(node, walker(plan_reads_in), context);
}

}  // namespace tscoll::pg::reads

namespace tscoll::pg {

void plan_collection_reads(Query *parse) {
    if (!enable_bucket_pruning)
        return;
    reads::plan_reads_in(reinterpret_cast<Node *>(parse), nullptr);
}

}  // namespace tscoll::pg
