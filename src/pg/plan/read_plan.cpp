// Planning reads of collections (SPEC §5; doc/ARCHITECTURE.md, Reading).
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
#include "pg/plan/collection_read.hpp"
#include "pg/node_trees.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg::reads {

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
// The current bucket_max_span_seconds of each collection, by bucket table.
// coll_mod invalidates the bucket table's relcache entry, which drops its
// descriptor (catalog/collection.hpp) and makes PostgreSQL replan every
// cached plan that reads the collection.

// 0 when the catalog has no row for the table.
int64 span_seconds(Oid bucket_table) {
    if (!ActiveSnapshotSet())
        return 0;  // no catalog read without a snapshot: no widening this time
    return guarded([&] {
        std::optional<CollectionInfo> info = find_collection_of_bucket_table(bucket_table);
        return info ? info->max_span_seconds : int64_t{0};
    });
}

// ---------------------------------------------------------------------------
// Bucket pruning.

bool is_bound(Node *expr) {
    return !contain_var_clause(expr) && !contain_volatile_functions(expr) &&
           !checkExprHasSubLink(expr);
}

int commute(int strategy) {
    return BTMaxStrategyNumber + 1 - strategy;  // < <= = >= > mirrored
}

// `node` as a btree comparison of something with a bound, else false.
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

bool is_column(Node *node, const CollectionRead &read, AttrNumber column) {
    if (!IsA(node, Var))
        return false;
    Var *v = castNode(Var, node);
    return static_cast<Index>(v->varno) == read.view_rti && v->varattno == column &&
           v->varlevelsup == 0;
}

Node *compare(Node *left, int strategy, Oid opfamily, Node *right) {
    Oid opno = get_opfamily_member(opfamily, exprType(left), exprType(right), strategy);
    if (!OidIsValid(opno))
        return nullptr;
    auto *op = castNode(OpExpr, make_opclause(opno, BOOLOID, false, (Expr *)left,
                                              (Expr *)copy_node(right), InvalidOid, InvalidOid));
    set_opfuncid(op);
    return reinterpret_cast<Node *>(op);
}

// tscoll._time_shift(bound, seconds): bound + seconds, saturating.
Node *shift(Node *bound, int64 seconds) {
    Oid types[] = {TIMESTAMPTZOID, INT8OID};
    Oid fn = tscoll_function("_time_shift", 2, types);
    if (!OidIsValid(fn))
        return nullptr;
    List *args = list_make2(
        copy_node(bound),
        makeConst(INT8OID, -1, InvalidOid, 8, Int64GetDatum(seconds), false, FLOAT8PASSBYVAL));
    return reinterpret_cast<Node *>(
        makeFuncExpr(fn, TIMESTAMPTZOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
}

Node *bucket_column(const CollectionRead &read, const char *name) {
    AttrNumber attno = get_attnum(read.bucket_table, name);
    if (attno == InvalidAttrNumber)
        return nullptr;
    return reinterpret_cast<Node *>(
        makeVar(read.bucket_rti, attno, get_atttype(read.bucket_table, attno), -1, InvalidOid, 0));
}

// The AND of the conditions that are not nullptr (which imply nothing).
Node *all_of(List *parts) {
    List *conditions = NIL;
    ListCell *lc;
    foreach (lc, parts)
        if (lfirst(lc) != nullptr)
            conditions = lappend(conditions, lfirst(lc));
    if (conditions == NIL)
        return nullptr;
    return list_length(conditions) == 1 ? static_cast<Node *>(linitial(conditions))
                                        : reinterpret_cast<Node *>(make_andclause(conditions));
}

// MongoDB's rules (SPEC §5): time > T => max > T AND min > T - span; time <
// T => min < T AND max < T + span; = needs both. A bucket's min_time is at
// most its earliest measurement, max_time its latest, and the two are less
// than the current span apart (coll_mod only raises it).
Node *time_condition(const CollectionRead &read, const Comparison &c) {
    Node *min_time = bucket_column(read, "min_time");
    Node *max_time = bucket_column(read, "max_time");
    if (min_time == nullptr || max_time == nullptr)
        return nullptr;
    int64 span = c.subject_type == TIMESTAMPTZOID && exprType(c.bound) == TIMESTAMPTZOID
                     ? span_seconds(read.bucket_table)
                     : 0;
    bool below = c.strategy == BTLessStrategyNumber || c.strategy == BTLessEqualStrategyNumber;
    bool above =
        c.strategy == BTGreaterStrategyNumber || c.strategy == BTGreaterEqualStrategyNumber;
    List *parts = NIL;
    if (below || c.strategy == BTEqualStrategyNumber) {
        int s = below ? c.strategy : static_cast<int>(BTLessEqualStrategyNumber);
        parts = lappend(parts, compare(min_time, s, c.opfamily, c.bound));
        if (Node *later = span > 0 ? shift(c.bound, span) : nullptr)
            parts = lappend(parts, compare(copy_node(max_time), s, c.opfamily, later));
    }
    if (above || c.strategy == BTEqualStrategyNumber) {
        int s = above ? c.strategy : static_cast<int>(BTGreaterEqualStrategyNumber);
        parts = lappend(parts, compare(copy_node(max_time), s, c.opfamily, c.bound));
        if (Node *earlier = span > 0 ? shift(c.bound, -span) : nullptr)
            parts = lappend(parts, compare(copy_node(min_time), s, c.opfamily, earlier));
    }
    return all_of(parts);
}

// The key of doc->>'key' or doc->'key' on the view's doc column, else nullptr.
const char *field_key(Node *node, const CollectionRead &read, Oid funcid) {
    if (read.doc_column == 0 || !IsA(node, OpExpr))
        return nullptr;
    OpExpr *op = castNode(OpExpr, node);
    set_opfuncid(op);
    if (op->opfuncid != funcid || list_length(op->args) != 2 ||
        !is_column(static_cast<Node *>(linitial(op->args)), read, read.doc_column) ||
        !IsA(lsecond(op->args), Const))
        return nullptr;
    Const *key = lsecond_node(Const, op->args);
    if (key->constisnull || key->consttype != TEXTOID)
        return nullptr;
    return TextDatumGetCString(key->constvalue);
}

// (doc->>'f')::float8|numeric|int <op> bound, or doc->'f' <op> bound (jsonb):
// tscoll._control_may_match(control, 'f', strategy, bound).
Node *field_condition(const CollectionRead &read, const Comparison &c) {
    const char *key = nullptr;
    Node *bound = c.bound;
    Oid bound_type = exprType(bound);
    if (IsA(c.subject, CoerceViaIO)) {
        Oid to = castNode(CoerceViaIO, c.subject)->resulttype;
        key = field_key(reinterpret_cast<Node *>(castNode(CoerceViaIO, c.subject)->arg), read,
                        F_JSONB_OBJECT_FIELD_TEXT);
        if (to == FLOAT8OID && bound_type == FLOAT8OID) {
        } else if (to == NUMERICOID && bound_type == NUMERICOID) {
        } else if ((to == INT2OID || to == INT4OID || to == INT8OID) &&
                   (bound_type == INT2OID || bound_type == INT4OID || bound_type == INT8OID)) {
            bound = coerce_to_target_type(nullptr, bound, bound_type, NUMERICOID, -1,
                                          COERCION_IMPLICIT, COERCE_IMPLICIT_CAST, -1);
        } else {
            return nullptr;
        }
    } else if (bound_type == JSONBOID) {
        key = field_key(c.subject, read, F_JSONB_OBJECT_FIELD);
    }
    if (key == nullptr || bound == nullptr)
        return nullptr;
    Node *control = bucket_column(read, "control");
    if (control == nullptr)
        return nullptr;
    List *args = list_make4(
        control,
        makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1, CStringGetTextDatum(key), false, false),
        makeConst(INT4OID, -1, InvalidOid, 4, Int32GetDatum(c.strategy), false, true),
        copy_node(bound));
    Oid types[] = {JSONBOID, TEXTOID, INT4OID, exprType(bound)};
    Oid fn = tscoll_function("_control_may_match", 4, types);
    if (!OidIsValid(fn))
        return nullptr;
    return reinterpret_cast<Node *>(
        makeFuncExpr(fn, BOOLOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL));
}

// The jsonb values whose ->> text is `text`: the string, and the number or
// boolean that jsonb prints as exactly `text`.
List *jsonb_spellings(const char *text) {
    StringInfoData quoted;
    initStringInfo(&quoted);
    escape_json(&quoted, text);
    Datum string = DirectFunctionCall1(jsonb_in, CStringGetDatum(quoted.data));
    List *values = list_make1(makeConst(JSONBOID, -1, InvalidOid, -1, string, false, false));
    size_t length = strlen(text);
    const char *digits = text + (text[0] == '-');
    const char *dot = strchr(digits, '.');
    bool number = length > 0 && length < 1000 && isdigit(static_cast<unsigned char>(digits[0])) &&
                  strspn(digits, "0123456789.") == strlen(digits) &&
                  (dot == nullptr || strchr(dot + 1, '.') == nullptr);
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0 ||
        (number && strchr("0123456789", text[length - 1]) != nullptr)) {
        // Only a canonical spelling can be jsonb's output; anything else,
        // such as "05" or "1.", is left to the string alone.
        Datum parsed = number ? DirectFunctionCall3(numeric_in, CStringGetDatum(text),
                                                    ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1))
                              : 0;
        if (!number || strcmp(DatumGetCString(DirectFunctionCall1(numeric_out, parsed)), text) == 0)
            values = lappend(values, makeConst(JSONBOID, -1, InvalidOid, -1,
                                               DirectFunctionCall1(jsonb_in, CStringGetDatum(text)),
                                               false, false));
    }
    return values;
}

// meta->>'k' = 'text' => meta->'k' IN (the jsonb values printed as 'text'),
// which an index on a meta subfield (MongoDB's "meta.k") can serve.
Node *meta_condition(const CollectionRead &read, const Comparison &c) {
    if (c.strategy != BTEqualStrategyNumber || !IsA(c.bound, Const) ||
        castNode(Const, c.bound)->constisnull || castNode(Const, c.bound)->consttype != TEXTOID ||
        !IsA(c.subject, OpExpr))
        return nullptr;
    OpExpr *field = castNode(OpExpr, c.subject);
    set_opfuncid(field);
    if (field->opfuncid != F_JSONB_OBJECT_FIELD_TEXT ||
        !is_column(static_cast<Node *>(linitial(field->args)), read, read.meta_column) ||
        !IsA(lsecond(field->args), Const))
        return nullptr;
    Node *meta = bucket_column(read, "meta");
    List *arrow = qualified("pg_catalog", "->");
    List *equals = qualified("pg_catalog", "=");
    Oid arrow_op = OpernameGetOprid(arrow, JSONBOID, TEXTOID);
    Oid equals_op = OpernameGetOprid(equals, JSONBOID, JSONBOID);
    if (meta == nullptr || !OidIsValid(arrow_op) || !OidIsValid(equals_op))
        return nullptr;
    Expr *subfield =
        make_opclause(arrow_op, JSONBOID, false, (Expr *)meta,
                      (Expr *)copy_node(lsecond(field->args)), InvalidOid, DEFAULT_COLLATION_OID);
    set_opfuncid(castNode(OpExpr, subfield));
    const char *printed = TextDatumGetCString(castNode(Const, c.bound)->constvalue);
    if (printed[0] == '{' || printed[0] == '[')
        return nullptr;  // an object's or array's text: no index lookup for those
    List *values = jsonb_spellings(printed);
    List *alternatives = NIL;
    ListCell *lc;
    foreach (lc, values) {
        Expr *eq = make_opclause(equals_op, BOOLOID, false, copy_node(subfield),
                                 static_cast<Expr *>(lfirst(lc)), InvalidOid, InvalidOid);
        set_opfuncid(castNode(OpExpr, eq));
        alternatives = lappend(alternatives, eq);
    }
    return list_length(alternatives) == 1 ? static_cast<Node *>(linitial(alternatives))
                                          : reinterpret_cast<Node *>(make_orclause(alternatives));
}

bool reads_only_meta(Node *node, const CollectionRead &read);

// t IN (...) or t = ANY(array) on the time column: one equality's
// condition per element for up to kMaxInElements known elements, else
// min_time <= ANY(array) AND max_time >= ANY(array), looser but still
// true of every bucket that can hold a match.
constexpr int kMaxInElements = 100;

Node *time_in_condition(const CollectionRead &read, ScalarArrayOpExpr *in) {
    if (!in->useOr || list_length(in->args) != 2 ||
        !is_column(static_cast<Node *>(linitial(in->args)), read, read.time_column))
        return nullptr;
    Node *array = static_cast<Node *>(lsecond(in->args));
    if (!is_bound(array))
        return nullptr;
    Oid element_type = get_element_type(exprType(array));
    Comparison c{static_cast<Node *>(linitial(in->args)), nullptr, 0, InvalidOid, TIMESTAMPTZOID};
    List *meanings = get_op_btree_interpretation(in->opno);
    ListCell *lc;
    foreach (lc, meanings) {
        auto *m = static_cast<OpBtreeInterpretation *>(lfirst(lc));
        if (m->strategy == BTEqualStrategyNumber && m->oplefttype == TIMESTAMPTZOID) {
            c.strategy = m->strategy;
            c.opfamily = m->opfamily_id;
        }
    }
    if (c.strategy == 0 || !OidIsValid(element_type))
        return nullptr;
    array = copy_node(array);
    IncrementVarSublevelsUp(array, 1, 1);
    List *elements = NIL;
    if (IsA(array, ArrayExpr) && !castNode(ArrayExpr, array)->multidims) {
        elements = castNode(ArrayExpr, array)->elements;
    } else if (IsA(array, Const)) {
        Const *constant = castNode(Const, array);
        if (constant->constisnull)
            return reinterpret_cast<Node *>(makeBoolConst(false, false));
        Datum *values;
        bool *nulls;
        int n;
        int16 length;
        bool by_value;
        char align;
        get_typlenbyvalalign(element_type, &length, &by_value, &align);
        deconstruct_array(DatumGetArrayTypeP(constant->constvalue), element_type, length, by_value,
                          align, &values, &nulls, &n);
        for (int i = 0; i < n; i++)
            if (!nulls[i])  // = NULL matches nothing
                elements = lappend(elements, makeConst(element_type, -1, InvalidOid, length,
                                                       values[i], false, by_value));
        if (elements == NIL)
            return reinterpret_cast<Node *>(makeBoolConst(false, false));
    }
    if (elements != NIL && list_length(elements) <= kMaxInElements) {
        List *alternatives = NIL;
        foreach (lc, elements) {
            c.bound = static_cast<Node *>(lfirst(lc));
            Node *one = time_condition(read, c);
            if (one == nullptr)
                return nullptr;
            alternatives = lappend(alternatives, one);
        }
        return list_length(alternatives) == 1
                   ? static_cast<Node *>(linitial(alternatives))
                   : reinterpret_cast<Node *>(make_orclause(alternatives));
    }
    List *parts = NIL;
    for (auto [column, strategy] : {std::pair{"min_time", BTLessEqualStrategyNumber},
                                    std::pair{"max_time", BTGreaterEqualStrategyNumber}}) {
        Oid opno = get_opfamily_member(c.opfamily, TIMESTAMPTZOID, element_type, strategy);
        Node *side = bucket_column(read, column);
        if (!OidIsValid(opno) || side == nullptr)
            return nullptr;
        ScalarArrayOpExpr *any = makeNode(ScalarArrayOpExpr);
        any->opno = opno;
        any->opfuncid = get_opcode(opno);
        any->useOr = true;
        any->args = list_make2(side, copy_node(array));
        any->location = -1;
        parts = lappend(parts, any);
    }
    return reinterpret_cast<Node *>(make_andclause(parts));
}

// `node` with the bucket table's meta in place of the view's meta column.
Node *meta_of_buckets(Node *node, CollectionRead *read) {
    if (node == nullptr)
        return nullptr;
    if (is_column(node, *read, read->meta_column))
        return bucket_column(*read, "meta");
    return expression_tree_mutator(node, mutator(meta_of_buckets), read);
}

// A condition on bucket rows implied by the query's condition `qual`, or
// nullptr when it implies none. Within an OR that reads more than meta, a
// condition on meta alone is itself a bucket condition; at the top, or in
// an OR on meta alone, PostgreSQL already pushes it down to the buckets,
// so repeating it would only skew the estimates.
Node *bucket_condition(const CollectionRead &read, Node *qual, bool within_or = false) {
    if (qual == nullptr)
        return nullptr;
    if (IsA(qual, List))
        qual = reinterpret_cast<Node *>(make_ands_explicit(castNode(List, qual)));
    if (is_andclause(qual)) {
        List *parts = NIL;
        ListCell *lc;
        foreach (lc, castNode(BoolExpr, qual)->args)
            parts =
                lappend(parts, bucket_condition(read, static_cast<Node *>(lfirst(lc)), within_or));
        return all_of(parts);
    }
    if (is_orclause(qual)) {
        // An OR on meta alone is pushed down whole by PostgreSQL.
        bool mixed = within_or || !reads_only_meta(qual, read);
        List *parts = NIL;
        ListCell *lc;
        foreach (lc, castNode(BoolExpr, qual)->args) {
            Node *part = bucket_condition(read, static_cast<Node *>(lfirst(lc)), mixed);
            if (part == nullptr)
                return nullptr;
            parts = lappend(parts, part);
        }
        return reinterpret_cast<Node *>(make_orclause(parts));
    }
    if (IsA(qual, ScalarArrayOpExpr))
        if (Node *in = time_in_condition(read, castNode(ScalarArrayOpExpr, qual)))
            return in;
    Comparison c;
    if (as_comparison(qual, &c)) {
        // The bound moves one level down, into the view: references to outer
        // queries (a correlated subquery's) must reach as far up as before.
        c.bound = copy_node(c.bound);
        IncrementVarSublevelsUp(c.bound, 1, 1);
        if (is_column(c.subject, read, read.time_column))
            return time_condition(read, c);
        if (Node *meta = meta_condition(read, c))
            return meta;
        if (Node *field = field_condition(read, c))
            return field;
    }
    // Strict only: the view may be the nullable side of an outer join, where
    // pruning a bucket turns its rows into NULLs, which `m IS NULL` (say)
    // would then let through. A strict condition rejects them as before.
    if (within_or && read.meta_column != 0 && reads_only_meta(qual, read) &&
        !contain_nonstrict_functions(qual))
        return meta_of_buckets(copy_node(qual), const_cast<CollectionRead *>(&read));
    return nullptr;
}

void add_bucket_conditions(const CollectionRead &read) {
    // MERGE's join condition does not filter the source: NOT MATCHED rows count.
    if (read.query->commandType == CMD_MERGE)
        return;
    Node *condition = bucket_condition(read, read.query->jointree->quals);
    if (condition == nullptr)
        return;
    FromExpr *from = read.view->jointree;
    from->quals =
        from->quals == nullptr
            ? condition
            : reinterpret_cast<Node *>(make_andclause(list_make2(from->quals, condition)));
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
// The last point per series (SPEC §5): SELECT DISTINCT ON (<meta
// expressions>) ... ORDER BY <the same>, time DESC, with at most meta
// conditions, reads only each series' latest bucket (the one whose max_time,
// exact in control, is the series' latest), and only its latest measurement.

// Whether `node` reads a column other than the view's meta (of any query).
bool reads_other_than_meta(Node *node, CollectionRead *read) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var))
        return !is_column(node, *read, read->meta_column);
    return expression_tree_walker(node, walker(reads_other_than_meta), read);
}

bool reads_only_meta(Node *node, const CollectionRead &read) {
    return node == nullptr || (!checkExprHasSubLink(node) && !contain_volatile_functions(node) &&
                               !reads_other_than_meta(node, const_cast<CollectionRead *>(&read)));
}

// A SELECT whose FROM is the view alone: its WHERE filters the view's rows
// and nothing else's.
bool selects_from_view_alone(const CollectionRead &read) {
    Query *q = read.query;
    return q->commandType == CMD_SELECT && list_length(q->jointree->fromlist) == 1 &&
           IsA(linitial(q->jointree->fromlist), RangeTblRef) &&
           static_cast<Index>(linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex) ==
               read.view_rti;
}

// A SELECT from the view alone, filtered on meta at most: answers per
// series can then come from a few buckets.
bool selects_by_meta_only(const CollectionRead &read) {
    Query *q = read.query;
    return selects_from_view_alone(read) && read.meta_column != 0 && !q->hasWindowFuncs &&
           !q->hasTargetSRFs && q->groupingSets == NIL && q->setOperations == nullptr &&
           reads_only_meta(q->jointree->quals, read);
}

bool asks_for_last_points(const CollectionRead &read) {
    Query *q = read.query;
    if (!selects_by_meta_only(read) || !q->hasDistinctOn || q->hasAggs || q->groupClause != NIL ||
        list_length(q->sortClause) <= list_length(q->distinctClause))
        return false;
    ListCell *lc;
    foreach (lc, q->distinctClause) {
        auto *clause = lfirst_node(SortGroupClause, lc);
        if (!reads_only_meta(
                reinterpret_cast<Node *>(get_sortgroupclause_expr(clause, q->targetList)), read))
            return false;
    }
    auto *next =
        static_cast<SortGroupClause *>(list_nth(q->sortClause, list_length(q->distinctClause)));
    Oid opfamily, type;
    int16 strategy;
    return is_column(reinterpret_cast<Node *>(get_sortgroupclause_expr(next, q->targetList)), read,
                     read.time_column) &&
           get_ordering_op_properties(next->sortop, &opfamily, &type, &strategy) &&
           strategy == BTGreaterStrategyNumber;
}

// Every table the subqueries of `node` read is read as `as_user`.
bool read_as(Node *node, Oid *as_user) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        ListCell *lc;
        foreach (lc, castNode(Query, node)->rtable)
            lfirst_node(RangeTblEntry, lc)->checkAsUser = *as_user;
        return query_tree_walker(castNode(Query, node), walker(read_as), as_user, 0);
    }
    return expression_tree_walker(node, walker(read_as), as_user);
}

// `condition` on the bucket table aliased b, analysed, for the view's WHERE;
// each %s in it is the bucket table (no other % is special). Tables it reads
// are read as the view reads the bucket table.
// $1, $2 ... are timestamptz parameters, for the caller to replace.
Node *analysed_bucket_condition(const CollectionRead &read, const char *condition,
                                int timestamptz_params) {
    char *table = quote_qualified_identifier(
        get_namespace_name(get_rel_namespace(read.bucket_table)), get_rel_name(read.bucket_table));
    StringInfoData sql;
    initStringInfo(&sql);
    appendStringInfo(&sql, "SELECT FROM %s b WHERE ", table);
    for (const char *c = condition; *c != '\0'; c++) {
        if (c[0] == '%' && c[1] == 's') {
            appendStringInfoString(&sql, table);
            c++;
        } else {
            appendStringInfoChar(&sql, *c);
        }
    }
    int search_path = push_catalog_search_path();
    RawStmt *raw = linitial_node(RawStmt, pg_parse_query(sql.data));
    Oid types[] = {TIMESTAMPTZOID, TIMESTAMPTZOID};
    Query *parsed = parse_analyze_fixedparams(raw, sql.data, types, timestamptz_params, nullptr);
    pop_search_path(search_path);
    Oid as_user = rt_fetch(read.bucket_rti, read.view->rtable)->checkAsUser;
    Node *qual = parsed->jointree->quals;
    read_as(qual, &as_user);
    ChangeVarNodes(qual, 1, read.bucket_rti, 0);
    return qual;
}

// Whether the view now reads only the latest measurement of each bucket.
bool read_last_points_only(const CollectionRead &read) {
    if (!asks_for_last_points(read))
        return false;
    Node *latest_buckets = analysed_bucket_condition(
        read,
        "(coalesce(b.meta::text, ''), b.max_time) IN "
        "(SELECT coalesce(l.meta::text, ''), max(l.max_time) FROM %s l GROUP BY 1)");
    List *equals = qualified("pg_catalog", "=");
    Oid equals_op = OpernameGetOprid(equals, TIMESTAMPTZOID, TIMESTAMPTZOID);
    Expr *latest_point =
        make_opclause(equals_op, BOOLOID, false,
                      (Expr *)makeVar(read.unpack_rti, 1, TIMESTAMPTZOID, -1, InvalidOid, 0),
                      (Expr *)bucket_column(read, "max_time"), InvalidOid, InvalidOid);
    set_opfuncid(castNode(OpExpr, latest_point));
    read.view->hasSubLinks = true;
    FromExpr *from = read.view->jointree;
    List *quals = list_make2(latest_buckets, latest_point);
    if (from->quals != nullptr)
        quals = lcons(from->quals, quals);
    from->quals = reinterpret_cast<Node *>(make_andclause(quals));
    return true;
}

// ---------------------------------------------------------------------------
// First points: ORDER BY time [DESC] LIMIT k, filtered on meta at most,
// needs only the buckets that reach a time T such that k measurements of
// the series read are known to be at or after (at or before) it. Every
// bucket holding an answer reaches T: its max_time is at least the answer's
// time, its min_time at most. Control gives two such T:
//  * the k-th latest (earliest) bucket max_time: each is a measurement's;
//  * the latest min_time (earliest max_time) at which the buckets starting
//    (ending) at or after (before) it hold k measurements (control.count).

// k when the query asks for its first k measurements by time (LIMIT plus
// OFFSET), with their order in *descending; else 0.
int64 first_points_asked(const CollectionRead &read, bool *descending) {
    Query *q = read.query;
    if (!selects_by_meta_only(read) || q->hasAggs || q->groupClause != NIL ||
        q->distinctClause != NIL || q->havingQual != nullptr || q->rowMarks != NIL ||
        q->sortClause == NIL || q->limitOption != LIMIT_OPTION_COUNT || q->limitCount == nullptr)
        return 0;
    auto *first = linitial_node(SortGroupClause, q->sortClause);
    Oid opfamily, type;
    int16 strategy;
    if (!is_column(reinterpret_cast<Node *>(get_sortgroupclause_expr(first, q->targetList)), read,
                   read.time_column) ||
        !get_ordering_op_properties(first->sortop, &opfamily, &type, &strategy))
        return 0;
    *descending = strategy == BTGreaterStrategyNumber;
    int64 count = constant_count(q->limitCount);
    int64 offset = q->limitOffset != nullptr ? constant_count(q->limitOffset) : 0;
    return count > 0 && offset >= 0 && count + offset <= 100000 ? count + offset : 0;
}

// Sets the WHERE of every query in `node` that reads the bucket table as l.
bool filter_series(Node *node, Node *conditions) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        Query *q = castNode(Query, node);
        auto *first = q->rtable != NIL ? linitial_node(RangeTblEntry, q->rtable) : nullptr;
        if (first != nullptr && first->rtekind == RTE_RELATION && first->alias != nullptr &&
            strcmp(first->alias->aliasname, "l") == 0)
            q->jointree->quals = copy_node(conditions);
        return query_tree_walker(q, walker(filter_series), conditions, 0);
    }
    return expression_tree_walker(node, walker(filter_series), conditions);
}

// The window in which the answers are, else NIL.
List *read_first_points_only(CollectionRead read) {
    bool descending = false;
    int64 k = first_points_asked(read, &descending);
    if (k == 0)
        return NIL;
    // %%s: the bucket table, filled in by analysed_bucket_condition.
    const char *by_count =
        "(SELECT s.%1$s FROM (SELECT l.%1$s, sum((l.control->>'count')::int8) OVER (ORDER BY "
        "l.%1$s %2$s) AS n FROM %%s l) s WHERE s.n >= %3$lld ORDER BY 1 %2$s LIMIT 1)";
    char *count_bound = psprintf(by_count, descending ? "min_time" : "max_time",
                                 descending ? "DESC" : "ASC", static_cast<long long>(k));
    char *condition = descending
                          ? psprintf(
                                "b.max_time >= coalesce(greatest((SELECT l.max_time FROM %%s l "
                                "ORDER BY 1 DESC OFFSET %lld LIMIT 1), %s), '-infinity')",
                                static_cast<long long>(k - 1), count_bound)
                          : psprintf("b.min_time <= coalesce(%s, 'infinity')", count_bound);
    Node *qual = analysed_bucket_condition(read, condition);
    // The query's meta conditions, and their bucket conditions, which an
    // index on a meta subfield serves.
    Node *quals = read.query->jointree->quals;
    Node *conditions = meta_of_buckets(copy_node(quals), &read);
    if (Node *indexable = bucket_condition(read, quals))
        conditions =
            conditions == nullptr
                ? indexable
                : reinterpret_cast<Node *>(make_andclause(list_make2(conditions, indexable)));
    if (conditions != nullptr) {
        // In the subqueries below, the bucket table is the first relation.
        ChangeVarNodes(conditions, read.bucket_rti, 1, 0);
        filter_series(qual, conditions);
    }
    FromExpr *from = read.view->jointree;
    from->quals = from->quals == nullptr
                      ? qual
                      : reinterpret_cast<Node *>(make_andclause(list_make2(from->quals, qual)));
    read.view->hasSubLinks = true;
    return window_from(copy_node(static_cast<Node *>(lsecond(castNode(OpExpr, qual)->args))),
                       !descending);
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

// How _unpack_fields returns a field: doc->>'f' (text), doc->'f' (jsonb),
// and for (doc->>'f')::float8 the numbers as float8 and the other values as
// text, to be cast where the query casts them.
enum FieldKind : char { kText = 't', kJsonb = 'j', kNumber = 'f', kNotNumber = 'o' };

Oid kind_type(int kind) {
    return kind == kJsonb ? JSONBOID : kind == kNumber ? FLOAT8OID : TEXTOID;
}

// A reference to the view's column for (key, kind), added when new.
Var *field_column(FieldUse *use, const char *key, FieldKind kind, Oid collation) {
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
    ListCell *lc;
    foreach (lc, make_ands_implicit(reinterpret_cast<Expr *>(read.query->jointree->quals))) {
        Comparison c;
        if (!as_comparison(static_cast<Node *>(lfirst(lc)), &c) || !IsA(c.subject, CoerceViaIO) ||
            castNode(CoerceViaIO, c.subject)->resulttype != FLOAT8OID)
            continue;
        // 90.0 is float8(90.0::numeric) until folded.
        c.bound = eval_const_expressions(nullptr, copy_node(c.bound));
        if (!IsA(c.bound, Const) || castNode(Const, c.bound)->consttype != FLOAT8OID ||
            castNode(Const, c.bound)->constisnull)
            continue;
        const char *key = field_key(reinterpret_cast<Node *>(castNode(CoerceViaIO, c.subject)->arg),
                                    read, F_JSONB_OBJECT_FIELD_TEXT);
        if (key == nullptr)
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
// time window.
void unpack_within_window(const CollectionRead &read, List *window) {
    if (OidIsValid(
            unpack_variant(read, "_unpack", {TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID, BOOLOID})))
        unpack_with(read, "_unpack",
                    list_concat(unpack_arguments(read), time_window(read, window)));
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
        unpack_within_window(read, window);
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
            // max(time) alone: a row per bucket, its max_time, exact in control.
            unpack_with(read, "_bucket_latest", list_make1(bucket_column(read, "max_time")));
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
    for (Index rti = 1; rti <= static_cast<Index>(list_length(query->rtable)); rti++) {
        CollectionRead read;
        if (!recognise(query, rti, &read))
            continue;
        add_bucket_conditions(read);
        List *window = read_last_points_only(read)
                           ? window_from(bucket_column(read, "max_time"), false)
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
