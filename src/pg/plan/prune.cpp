// Bucket pruning (plan/read_plan.cpp): the conditions on bucket rows that a
// query's conditions on the view imply, added to the view's WHERE.
// This file holds no C++ object with a destructor: it calls PostgreSQL
// directly (see guard.hpp).
extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
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
#include "utils/snapmgr.h"
}

#include <initializer_list>
#include <optional>
#include <utility>

#include "pg/catalog/collection.hpp"
#include "pg/guard.hpp"
#include "pg/plan/collection_read.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/read/bucket_conditions.hpp"
#include "pg/read/unpack_call.hpp"
#include "pg/node_trees.hpp"
#include "pg/settings.hpp"

namespace tscoll::pg::reads {

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

char *latest_time_sql(const char *alias, const char *time_field) {
    return psprintf(
        "CASE WHEN %1$s.control ? 'tail' THEN tscoll._control_time(%1$s.control, "
        "'latest', %2$s) ELSE %1$s.max_time END",
        alias, quote_literal_cstr(time_field));
}

Node *latest_time(const CollectionRead &read) {
    Node *time_field =
        static_cast<Node *>(list_nth(unpack_arguments(read), unpack_call::kTimeField));
    Oid types[] = {JSONBOID, TEXTOID, TEXTOID};
    FuncExpr *exact =
        makeFuncExpr(tscoll_function("_control_time", 3, types), TIMESTAMPTZOID,
                     list_make3(bucket_column(read, "control"),
                                makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
                                          CStringGetTextDatum("latest"), false, false),
                                copy_node(time_field)),
                     InvalidOid, DEFAULT_COLLATION_OID, COERCE_EXPLICIT_CALL);
    Oid has_key = OpernameGetOprid(qualified("pg_catalog", "?"), JSONBOID, TEXTOID);
    Expr *is_tail = make_opclause(
        has_key, BOOLOID, false, reinterpret_cast<Expr *>(bucket_column(read, "control")),
        reinterpret_cast<Expr *>(makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
                                           CStringGetTextDatum("tail"), false, false)),
        InvalidOid, DEFAULT_COLLATION_OID);
    set_opfuncid(castNode(OpExpr, is_tail));
    CaseWhen *when = makeNode(CaseWhen);
    when->expr = is_tail;
    when->result = reinterpret_cast<Expr *>(exact);
    when->location = -1;
    CaseExpr *latest = makeNode(CaseExpr);
    latest->casetype = TIMESTAMPTZOID;
    latest->casecollid = InvalidOid;
    latest->args = list_make1(when);
    latest->defresult = reinterpret_cast<Expr *>(bucket_column(read, "max_time"));
    latest->location = -1;
    return reinterpret_cast<Node *>(latest);
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

// MongoDB's rules (doc/REFERENCE.md §3.4, SELECT; doc/ARCHITECTURE.md,
// Bucket conditions): time > T => max > T AND min > T - span; time < T =>
// min < T AND max < T + span; = needs both. A bucket's min_time is at most
// its earliest measurement, max_time its latest (a tail's, a bound: its
// start plus the span), and the two are at most the current span apart
// (coll_mod only raises it).
Node *time_condition_on(const CollectionRead &read, Node *min_time, Node *max_time,
                        const Comparison &c) {
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

Node *time_condition(const CollectionRead &read, const Comparison &c) {
    return time_condition_on(read, bucket_column(read, "min_time"), bucket_column(read, "max_time"),
                             c);
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

const char *typed_field_key(Node *node, const CollectionRead &read, char *kind) {
    if (!IsA(node, FuncExpr) || list_length(castNode(FuncExpr, node)->args) != 1)
        return nullptr;
    FuncExpr *call = castNode(FuncExpr, node);
    const char *name = get_func_name(call->funcid);
    std::optional<TypedField> typed = name ? typed_field_of_function(name) : std::nullopt;
    if (!typed || !is_tscoll_function(call->funcid, name, 1))
        return nullptr;
    *kind = static_cast<char>(*typed);
    return field_key(static_cast<Node *>(linitial(call->args)), read, F_JSONB_OBJECT_FIELD);
}

// A typed number field's column as doc->>'f' cast to its type, which
// pruning reads alike: numbers compare as numbers, and a value of another
// type, NULL in the typed column, passes no comparison. nullptr for other
// subjects. (Control's strings cannot be told from ObjectIds, and dates
// are objects there: other types do not prune.)
Node *typed_number_subject(const CollectionRead &read, Node *subject) {
    char kind = 0;
    if (typed_field_key(subject, read, &kind) == nullptr ||
        (kind != static_cast<char>(TypedField::Float8) &&
         kind != static_cast<char>(TypedField::Int8) &&
         kind != static_cast<char>(TypedField::Int4)))
        return nullptr;
    OpExpr *as_text = copy_node(linitial_node(OpExpr, castNode(FuncExpr, subject)->args));
    as_text->opno = OpernameGetOprid(qualified("pg_catalog", "->>"), JSONBOID, TEXTOID);
    as_text->opfuncid = F_JSONB_OBJECT_FIELD_TEXT;
    as_text->opresulttype = TEXTOID;
    CoerceViaIO *cast = makeNode(CoerceViaIO);
    cast->arg = reinterpret_cast<Expr *>(as_text);
    cast->resulttype = typed_field_type(kind);
    cast->resultcollid = InvalidOid;
    cast->coerceformat = COERCE_EXPLICIT_CAST;
    cast->location = -1;
    return reinterpret_cast<Node *>(cast);
}

// (doc->>'f')::float8|numeric|int <op> bound, or doc->'f' <op> bound (jsonb):
// tscoll._control_may_match(control, 'f', strategy, bound).
Node *field_condition(const CollectionRead &read, Comparison c) {
    if (Node *subject = typed_number_subject(read, c.subject))
        c.subject = subject;
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

// meta->>'k' = 'text' => meta->'k' IN (the jsonb values printed as 'text'),
// which an index on a meta subfield (MongoDB's "meta.k") can serve; for a
// bound known only when the query runs (a parameter, a LATERAL reference),
// meta->'k' = ANY(tscoll._jsonb_spellings(bound)).
// jsonb's = operator, or InvalidOid.
Oid jsonb_equals() {
    return OpernameGetOprid(qualified("pg_catalog", "="), JSONBOID, JSONBOID);
}

// meta->'k' on the bucket row for `key`, or nullptr.
Expr *meta_subfield(const CollectionRead &read, Node *key) {
    Node *meta = bucket_column(read, "meta");
    Oid arrow_op = OpernameGetOprid(qualified("pg_catalog", "->"), JSONBOID, TEXTOID);
    if (meta == nullptr || !OidIsValid(arrow_op))
        return nullptr;
    Expr *subfield = make_opclause(arrow_op, JSONBOID, false, (Expr *)meta, (Expr *)copy_node(key),
                                   InvalidOid, DEFAULT_COLLATION_OID);
    set_opfuncid(castNode(OpExpr, subfield));
    return subfield;
}

// The key of meta->>'key' on the view's meta column, else nullptr.
Node *meta_text_key(const CollectionRead &read, Node *node) {
    if (!IsA(node, OpExpr))
        return nullptr;
    OpExpr *field = castNode(OpExpr, node);
    set_opfuncid(field);
    if (field->opfuncid != F_JSONB_OBJECT_FIELD_TEXT ||
        !is_column(static_cast<Node *>(linitial(field->args)), read, read.meta_column) ||
        !IsA(lsecond(field->args), Const))
        return nullptr;
    return static_cast<Node *>(lsecond(field->args));
}

// subfield = ANY(tscoll._jsonb_spellings(printed)), for text or text[]
// `printed` known only when the query runs (or folded by the planner).
Node *any_spelling(Expr *subfield, Node *printed) {
    Oid type = exprType(printed);
    Oid spellings = tscoll_function("_jsonb_spellings", 1, &type);
    Oid equals_op = jsonb_equals();
    if (!OidIsValid(spellings) || !OidIsValid(equals_op))
        return nullptr;
    ScalarArrayOpExpr *any = makeNode(ScalarArrayOpExpr);
    any->opno = equals_op;
    any->opfuncid = get_opcode(equals_op);
    any->useOr = true;
    // Folded now where `printed` is constant: the function is parallel
    // unsafe, and left in the query it would rule out parallel plans.
    Node *values = reinterpret_cast<Node *>(
        makeFuncExpr(spellings, JSONBARRAYOID, list_make1(printed), InvalidOid,
                     DEFAULT_COLLATION_OID, COERCE_EXPLICIT_CALL));
    values = eval_const_expressions(nullptr, values);
    any->args = list_make2(subfield, values);
    any->location = -1;
    return reinterpret_cast<Node *>(any);
}

Node *meta_condition(const CollectionRead &read, const Comparison &c) {
    if (c.strategy != BTEqualStrategyNumber || exprType(c.bound) != TEXTOID ||
        (IsA(c.bound, Const) && castNode(Const, c.bound)->constisnull))
        return nullptr;
    Node *key = meta_text_key(read, c.subject);
    Expr *subfield = key != nullptr ? meta_subfield(read, key) : nullptr;
    Oid equals_op = jsonb_equals();
    if (subfield == nullptr || !OidIsValid(equals_op))
        return nullptr;
    if (!IsA(c.bound, Const))
        return any_spelling(subfield, copy_node(c.bound));
    const char *printed = TextDatumGetCString(castNode(Const, c.bound)->constvalue);
    if (printed[0] == '{' || printed[0] == '[')
        return nullptr;  // an object's or array's text: no index lookup for those
    List *alternatives = NIL;
    ListCell *lc;
    foreach (lc, jsonb_spellings(printed)) {
        Const *value =
            makeConst(JSONBOID, -1, InvalidOid, -1, PointerGetDatum(lfirst(lc)), false, false);
        Expr *eq = make_opclause(equals_op, BOOLOID, false, copy_node(subfield),
                                 reinterpret_cast<Expr *>(value), InvalidOid, InvalidOid);
        set_opfuncid(castNode(OpExpr, eq));
        alternatives = lappend(alternatives, eq);
    }
    return list_length(alternatives) == 1 ? static_cast<Node *>(linitial(alternatives))
                                          : reinterpret_cast<Node *>(make_orclause(alternatives));
}

bool reads_only_meta(Node *node, const CollectionRead &read);

// meta->>'k' IN (...) or = ANY(text[]) => meta->'k' = ANY(the jsonb values
// printed as those texts).
Node *meta_in_condition(const CollectionRead &read, ScalarArrayOpExpr *in) {
    if (!in->useOr || list_length(in->args) != 2 || in->opno != TextEqualOperator)
        return nullptr;
    Node *array = static_cast<Node *>(lsecond(in->args));
    Node *key = meta_text_key(read, static_cast<Node *>(linitial(in->args)));
    if (key == nullptr || !is_bound(array) || exprType(array) != TEXTARRAYOID)
        return nullptr;
    Expr *subfield = meta_subfield(read, key);
    if (subfield == nullptr)
        return nullptr;
    array = copy_node(array);
    IncrementVarSublevelsUp(array, 1, 1);
    return any_spelling(subfield, array);
}

// meta @> '{"k": v, ...}' => meta->'k' = v for each scalar v: containment
// of an object's scalar member is jsonb equality.
// meta @> jsonb_build_object('k', v, ...) => meta->'k' = to_jsonb(v) for
// each constant key and scalar-typed v (NULL: JSON null), evaluated when
// the query runs, as jsonb_build_object is.
Node *built_object_condition(const CollectionRead &read, Node *built, Oid equals_op) {
    if (!IsA(built, FuncExpr) || castNode(FuncExpr, built)->funcid != F_JSONB_BUILD_OBJECT_ANY ||
        castNode(FuncExpr, built)->funcvariadic || !is_bound(built))
        return nullptr;
    List *args = castNode(FuncExpr, built)->args;
    if (list_length(args) % 2 != 0)
        return nullptr;
    // Its untyped literals are text, as jsonb_build_object reads them.
    auto as_text = [](Node *node) {
        if (!IsA(node, Const) || castNode(Const, node)->consttype != UNKNOWNOID)
            return node;
        Const *c = castNode(Const, node);
        return reinterpret_cast<Node *>(
            makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
                      c->constisnull ? 0 : CStringGetTextDatum(DatumGetCString(c->constvalue)),
                      c->constisnull, false));
    };
    List *parts = NIL;
    for (int i = 0; i < list_length(args); i += 2) {
        Node *key = as_text(static_cast<Node *>(list_nth(args, i)));
        Node *value = as_text(copy_node(static_cast<Node *>(list_nth(args, i + 1))));
        switch (exprType(value)) {
            case TEXTOID:
            case VARCHAROID:
            case INT2OID:
            case INT4OID:
            case INT8OID:
            case NUMERICOID:
            case FLOAT4OID:
            case FLOAT8OID:
            case BOOLOID:
                break;
            default:
                continue;  // may build a container: containment, not equality
        }
        if (!IsA(key, Const) || castNode(Const, key)->constisnull ||
            castNode(Const, key)->consttype != TEXTOID)
            return nullptr;
        IncrementVarSublevelsUp(value, 1, 1);
        CoalesceExpr *json = makeNode(CoalesceExpr);
        json->coalescetype = JSONBOID;
        json->args = list_make2(
            makeFuncExpr(F_TO_JSONB, JSONBOID, list_make1(value), InvalidOid, InvalidOid,
                         COERCE_EXPLICIT_CALL),
            makeConst(JSONBOID, -1, InvalidOid, -1,
                      DirectFunctionCall1(jsonb_in, CStringGetDatum("null")), false, false));
        json->location = -1;
        Expr *subfield = meta_subfield(read, key);
        if (subfield == nullptr)
            return nullptr;
        Expr *eq = make_opclause(equals_op, BOOLOID, false, subfield,
                                 reinterpret_cast<Expr *>(json), InvalidOid, InvalidOid);
        set_opfuncid(castNode(OpExpr, eq));
        parts = lappend(parts, eq);
    }
    return all_of(parts);
}

Node *meta_containment_condition(const CollectionRead &read, Node *qual) {
    if (!IsA(qual, OpExpr) || list_length(castNode(OpExpr, qual)->args) != 2)
        return nullptr;
    OpExpr *op = castNode(OpExpr, qual);
    set_opfuncid(op);
    Oid equals_op = jsonb_equals();
    if (op->opfuncid != F_JSONB_CONTAINS ||
        !is_column(static_cast<Node *>(linitial(op->args)), read, read.meta_column) ||
        !OidIsValid(equals_op))
        return nullptr;
    Node *contained =
        eval_const_expressions(nullptr, copy_node(static_cast<Node *>(lsecond(op->args))));
    if (!IsA(contained, Const))
        return built_object_condition(read, contained, equals_op);
    if (castNode(Const, contained)->constisnull)
        return nullptr;
    Jsonb *object = DatumGetJsonbP(castNode(Const, contained)->constvalue);
    if (!JB_ROOT_IS_OBJECT(object))
        return nullptr;
    List *parts = NIL;
    JsonbIterator *it = JsonbIteratorInit(&object->root);
    JsonbValue v;
    JsonbIteratorToken token;
    char *key = nullptr;
    while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE) {
        if (token == WJB_KEY) {
            key = pnstrdup(v.val.string.val, v.val.string.len);
        } else if (token == WJB_VALUE && v.type != jbvBinary) {
            Node *name = reinterpret_cast<Node *>(makeConst(
                TEXTOID, -1, DEFAULT_COLLATION_OID, -1, CStringGetTextDatum(key), false, false));
            Expr *subfield = meta_subfield(read, name);
            if (subfield == nullptr)
                return nullptr;
            Const *value = makeConst(JSONBOID, -1, InvalidOid, -1,
                                     PointerGetDatum(JsonbValueToJsonb(&v)), false, false);
            Expr *eq = make_opclause(equals_op, BOOLOID, false, subfield,
                                     reinterpret_cast<Expr *>(value), InvalidOid, InvalidOid);
            set_opfuncid(castNode(OpExpr, eq));
            parts = lappend(parts, eq);
        }
    }
    return all_of(parts);
}

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
Node *bucket_condition(const CollectionRead &read, Node *qual, bool within_or) {
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
    if (IsA(qual, ScalarArrayOpExpr)) {
        if (Node *in = time_in_condition(read, castNode(ScalarArrayOpExpr, qual)))
            return in;
        if (Node *in = meta_in_condition(read, castNode(ScalarArrayOpExpr, qual)))
            return in;
    }
    if (Node *contained = meta_containment_condition(read, qual))
        return contained;
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

// ---------------------------------------------------------------------------
// Join values: the time compared with a column of another relation of the
// reading query (`c.time = latest.time`, `c.time >= h.since`). The bucket
// condition then reads that relation too, so it cannot go into the view's
// WHERE: it reads the bucket row's min_time and max_time through columns
// added to the view, and joins the comparison where it stands (the WHERE
// or an ON clause, but a FULL JOIN's). Implied by the comparison, it
// changes no result, whatever the join; PostgreSQL then unpacks a bucket
// only for the rows it can join with (a join filter, or a parameterized
// scan of the index on meta and start).

// Whether `node` reads columns of the query's other relations (not a
// join's merged columns, which may be the view's), none of the view's, and
// nothing volatile, no subquery, aggregate, window function or set.
bool is_join_value(Node *node, const void *context) {
    const auto &read = *static_cast<const CollectionRead *>(context);
    if (contain_volatile_functions(node) || checkExprHasSubLink(node) ||
        contain_aggs_of_level(node, 0) || contain_windowfuncs(node) || expression_returns_set(node))
        return false;
    Relids rels = pull_varnos_of_level(nullptr, node, 0);
    if (bms_is_empty(rels) || bms_is_member(static_cast<int>(read.view_rti), rels))
        return false;
    int rti = -1;
    while ((rti = bms_next_member(rels, rti)) >= 0)
        if (rt_fetch(rti, read.query->rtable)->rtekind == RTE_JOIN)
            return false;
    return true;
}

// Whether `node` holds a whole-row reference that may be the view's (its
// own, or a join's): columns added to the view would change that row.
struct WholeRows {
    const CollectionRead *read;
    Index levels;  // below the reading query
};

bool refers_to_whole_rows(Node *node, WholeRows *context) {
    if (node == nullptr)
        return false;
    if (IsA(node, Query)) {
        context->levels++;
        bool found =
            query_tree_walker(castNode(Query, node), walker(refers_to_whole_rows), context, 0);
        context->levels--;
        return found;
    }
    if (IsA(node, Var)) {
        Var *v = castNode(Var, node);
        if (v->varattno != 0 || v->varlevelsup != context->levels)
            return false;
        const CollectionRead &read = *context->read;
        return static_cast<Index>(v->varno) == read.view_rti ||
               rt_fetch(v->varno, read.query->rtable)->rtekind == RTE_JOIN;
    }
    return expression_tree_walker(node, walker(refers_to_whole_rows), context);
}

// The view's column for the bucket row's `name`, added to the view's
// target list the first time.
Node *view_bucket_column(const CollectionRead &read, const char *name) {
    AttrNumber attno = get_attnum(read.bucket_table, name);
    if (attno == InvalidAttrNumber)
        return nullptr;
    Oid type = get_atttype(read.bucket_table, attno);
    AttrNumber column = 0;
    ListCell *lc;
    foreach (lc, read.view->targetList) {
        auto *entry = lfirst_node(TargetEntry, lc);
        if (IsA(entry->expr, Var) &&
            static_cast<Index>(castNode(Var, entry->expr)->varno) == read.bucket_rti &&
            castNode(Var, entry->expr)->varattno == attno &&
            castNode(Var, entry->expr)->varlevelsup == 0)
            column = entry->resno;
    }
    if (column == 0) {
        column = static_cast<AttrNumber>(list_length(read.view->targetList) + 1);
        char *label = psprintf("bucket_%s", name);
        read.view->targetList =
            lappend(read.view->targetList,
                    makeTargetEntry(reinterpret_cast<Expr *>(bucket_column(read, name)), column,
                                    label, false));
        RangeTblEntry *view = rt_fetch(read.view_rti, read.query->rtable);
        view->eref->colnames = lappend(view->eref->colnames, makeString(pstrdup(label)));
    }
    return reinterpret_cast<Node *>(makeVar(read.view_rti, column, type, -1, InvalidOid, 0));
}

// `quals` (a list, an AND or one condition) with the bucket conditions of
// its comparisons of the time with join values added.
Node *with_join_value_conditions(const CollectionRead &read, Node *quals) {
    List *conjuncts = quals == nullptr      ? NIL
                      : IsA(quals, List)    ? castNode(List, quals)
                      : is_andclause(quals) ? castNode(BoolExpr, quals)->args
                                            : list_make1(quals);
    List *added = NIL;
    ListCell *lc;
    foreach (lc, conjuncts) {
        Comparison c;
        if (as_comparison_with(static_cast<Node *>(lfirst(lc)), &c, is_join_value, &read) &&
            is_column(c.subject, read, read.time_column))
            added = lappend(added, time_condition_on(read, view_bucket_column(read, "min_time"),
                                                     view_bucket_column(read, "max_time"), c));
    }
    Node *condition = all_of(added);
    if (condition == nullptr)
        return quals;
    return reinterpret_cast<Node *>(make_andclause(lappend(list_copy(conjuncts), condition)));
}

// The conditions of the WHERE and of every ON clause under `node` (of the
// reading query's join tree): an inner join's conditions on the view
// filter its rows as the WHERE does, and go to the view's WHERE as bucket
// conditions; comparisons with join values get theirs where they stand.
void add_join_conditions(const CollectionRead &read, Node *node, bool join_values,
                         List **view_conditions) {
    if (IsA(node, FromExpr)) {
        auto *from = castNode(FromExpr, node);
        ListCell *lc;
        foreach (lc, from->fromlist)
            add_join_conditions(read, static_cast<Node *>(lfirst(lc)), join_values,
                                view_conditions);
    } else if (IsA(node, JoinExpr)) {
        auto *join = castNode(JoinExpr, node);
        add_join_conditions(read, join->larg, join_values, view_conditions);
        add_join_conditions(read, join->rarg, join_values, view_conditions);
        if (join->jointype == JOIN_INNER)
            *view_conditions = lappend(*view_conditions, bucket_condition(read, join->quals));
        // A FULL JOIN's conditions must all be merge- or hash-joinable.
        if (join_values && join->jointype != JOIN_FULL)
            join->quals = with_join_value_conditions(read, join->quals);
    }
}

void add_bucket_conditions(const CollectionRead &read) {
    // MERGE's join condition does not filter the source: NOT MATCHED rows count.
    if (read.query->commandType == CMD_MERGE)
        return;
    FromExpr *top = read.query->jointree;
    WholeRows whole_rows{&read, 0};
    bool join_values = read.time_column != 0 && list_length(read.query->rtable) > 1 &&
                       !query_tree_walker(read.query, walker(refers_to_whole_rows), &whole_rows, 0);
    List *view_conditions = list_make1(bucket_condition(read, top->quals));
    add_join_conditions(read, reinterpret_cast<Node *>(top), join_values, &view_conditions);
    if (join_values)
        top->quals = with_join_value_conditions(read, top->quals);
    Node *condition = all_of(view_conditions);
    if (condition == nullptr)
        return;
    FromExpr *from = read.view->jointree;
    from->quals =
        from->quals == nullptr
            ? condition
            : reinterpret_cast<Node *>(make_andclause(list_make2(from->quals, condition)));
}

}  // namespace tscoll::pg::reads
