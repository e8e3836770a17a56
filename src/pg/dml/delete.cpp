// DELETE through a collection's view with a condition on time or
// measurements (modify.cpp translates the rest): a MERGE on the bucket
// table that deletes buckets whose measurements all match and rewrites
// those that match in part, and tscoll._remove_measurements, which
// rewrites one. C-style tree surgery: PostgreSQL is called directly.
extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "parser/parse_func.h"
#include "parser/parse_node.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/plancache.h"
#include "utils/syscache.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/bucket.hpp"
#include "core/error.hpp"
#include "pg/storage/bucket_am.hpp"
#include "pg/write/bucket_store.hpp"
#include "pg/catalog/catalog.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"
#include "pg/dml/modify.hpp"
#include "pg/dml/translation.hpp"
#include "pg/plan/comparison.hpp"
#include "pg/node_trees.hpp"
#include "pg/pg_time.hpp"
#include "pg/plan/read_plan.hpp"
#include "pg/nodes/returning.hpp"
#include "pg/search_path.hpp"
#include "pg/settings.hpp"
#include "pg/nodes/time_merge.hpp"
#include "pg/nodes/unpack_scan.hpp"

namespace tscoll::pg::dml {

using tscoll::pg::copy_node;
using tscoll::pg::mutator;
using tscoll::pg::walker;

// ---------------------------------------------------------------------------
// DELETE with a condition on time or measurements.

// A conjunct `time <op> T` of the condition, T known before the scan.
struct TimeBound {
    int strategy;  // BTLessStrategyNumber ... BTGreaterStrategyNumber, as `time <op> T`
    Expr *other;   // T
};

Oid time_opfamily() {
    return get_opclass_family(GetDefaultOpClass(TIMESTAMPTZOID, BTREE_AM_OID));
}

// Whether `clause` is `time <op> T` (or `T <op> time`) with a btree
// comparison and T free of columns, volatility and subqueries.
std::optional<TimeBound> time_bound(Node *clause, const Collection *c, Index view_rti) {
    Comparison comparison;
    if (!as_comparison(clause, &comparison) || !IsA(comparison.subject, Var))
        return std::nullopt;
    Var *time = castNode(Var, comparison.subject);
    if (time->varno != static_cast<int>(view_rti) || time->varlevelsup != 0 ||
        time->varattno != c->time_column ||
        !op_in_opfamily(castNode(OpExpr, clause)->opno, time_opfamily()))
        return std::nullopt;
    return TimeBound{comparison.strategy, reinterpret_cast<Expr *>(comparison.bound)};
}

// `<bucket column> <strategy op> T`, or nullptr when the operator family has
// no such operator for T's type.
Expr *bucket_comparison(const TimeBound &bound, int strategy, AttrNumber column, Index bucket_rti) {
    Oid other_type = exprType(reinterpret_cast<Node *>(bound.other));
    Oid opno = get_opfamily_member(time_opfamily(), TIMESTAMPTZOID, other_type, strategy);
    if (!OidIsValid(opno))
        return nullptr;
    Var *var = makeVar(bucket_rti, column, TIMESTAMPTZOID, -1, InvalidOid, 0);
    auto *op = reinterpret_cast<OpExpr *>(
        make_opclause(opno, BOOLOID, false, reinterpret_cast<Expr *>(var),
                      static_cast<Expr *>(copy_node(bound.other)), InvalidOid, InvalidOid));
    set_opfuncid(op);
    return reinterpret_cast<Expr *>(op);
}

// The condition split: what a bucket must satisfy to hold a match
// (`may_match`), and, when the condition is only about meta and time
// ranges, what makes every measurement of a bucket match (`all_match`,
// else nullptr). Meta conjuncts go to may_match only: it is checked first.
struct BucketConditions {
    List *may_match = NIL;
    List *all_match = NIL;
    bool all_known = true;
    bool measurements = false;  // some conjunct needs the measurements
};

BucketConditions bucket_conditions(Node *quals, const Collection *c, Index view_rti,
                                   Index bucket_rti) {
    BucketConditions out;
    List *conjuncts = make_ands_implicit(reinterpret_cast<Expr *>(quals));
    ListCell *lc;
    foreach (lc, conjuncts) {
        Node *clause = static_cast<Node *>(lfirst(lc));
        ColumnUse use = columns_read(clause, view_rti);
        // A volatile conjunct is evaluated per measurement.
        if (!use.whole_row && !contain_volatile_functions(clause) &&
            (use.columns == nullptr ||
             (c->meta_column != 0 &&
              bms_is_subset(use.columns, bms_make_singleton(c->meta_column))))) {
            ColumnMap map = {c, view_rti, 0, 0, bucket_rti, 0};
            out.may_match = lappend(out.may_match, map_columns(clause, &map));
            continue;
        }
        out.measurements = true;
        std::optional<TimeBound> bound = time_bound(clause, c, view_rti);
        if (!bound) {
            out.all_known = false;
            continue;
        }
        AttrNumber min = c->bucket_min_time, max = c->bucket_max_time;
        // Measurement times lie in [min_time, max_time] (min_time is the
        // rounded start, max_time the latest time).
        auto add = [&](List *&list, int strategy, AttrNumber column) {
            Expr *e = bucket_comparison(*bound, strategy, column, bucket_rti);
            if (e != nullptr)
                list = lappend(list, e);
            return e != nullptr;
        };
        switch (bound->strategy) {
            case BTLessStrategyNumber:
            case BTLessEqualStrategyNumber:
                add(out.may_match, bound->strategy, min);
                out.all_known &= add(out.all_match, bound->strategy, max);
                break;
            case BTGreaterStrategyNumber:
            case BTGreaterEqualStrategyNumber:
                add(out.may_match, bound->strategy, max);
                out.all_known &= add(out.all_match, bound->strategy, min);
                break;
            default:  // equality
                add(out.may_match, BTLessEqualStrategyNumber, min);
                add(out.may_match, BTGreaterEqualStrategyNumber, max);
                out.all_known = false;
        }
    }
    return out;
}

// The MERGE of a general DELETE, with tscoll._placeholder(n) where the
// conditions go. A condition that reads no doc unpacks only the times.
char *merge_sql(const Collection *c, bool with_all_match, bool reads_doc) {
    const char *time_field = quote_literal_cstr(c->time_field);
    const char *unpack = reads_doc
                             ? psprintf("tscoll._unpack(b._id, b.meta, b.data, %s, %s)", time_field,
                                        c->meta_field ? quote_literal_cstr(c->meta_field) : "NULL")
                             : psprintf("tscoll._unpack_times(b._id, b.data, %s)", time_field);
    const char *columns = reads_doc ? "\"time\", doc" : "\"time\"";
    StringInfoData sql;
    initStringInfo(&sql);
    // Citus runs a MERGE in each shard when its source is the same table
    // joined on the shard key; it refuses any other source, and a sublink
    // nested in an action's sublink (hence the positions as a lateral
    // subquery below).
    if (c->distributed)
        appendStringInfo(&sql,
                         "MERGE INTO %1$s AS b USING (SELECT _id, series_hash FROM %1$s) AS v ON "
                         "v.series_hash OPERATOR(pg_catalog.=) b.series_hash AND v._id "
                         "OPERATOR(pg_catalog.=) b._id AND tscoll._placeholder(0) ",
                         c->bucket_name);
    else
        appendStringInfo(
            &sql, "MERGE INTO %s AS b USING (VALUES (1)) AS v (one) ON tscoll._placeholder(0) ",
            c->bucket_name);
    if (with_all_match)
        appendStringInfoString(&sql, "WHEN MATCHED AND tscoll._placeholder(1) THEN DELETE ");
    appendStringInfo(
        &sql,
        "WHEN MATCHED AND (SELECT pg_catalog.count(*) FILTER (WHERE tscoll._placeholder(2)) "
        "OPERATOR(pg_catalog.=) pg_catalog.count(*) FROM %s AS m (%s)) THEN DELETE ",
        unpack, columns);
    appendStringInfo(&sql,
                     "WHEN MATCHED AND EXISTS (SELECT FROM %s AS m (%s) WHERE "
                     "tscoll._placeholder(2)) THEN UPDATE SET (control, data) = (SELECT "
                     "r.control, r.data FROM (SELECT pg_catalog.array_agg(m.n ORDER BY m.n) "
                     "FROM %s WITH ORDINALITY AS m (%s, n) WHERE tscoll._placeholder(2)) AS p "
                     "(positions), tscoll._remove_measurements(b._id, b.min_time, b.data, "
                     "p.positions, %s, b.control) AS r)",
                     unpack, columns, unpack, columns, time_field);
    return sql.data;
}

struct Placement {
    Oid placeholder;
    Expr *may_match;
    Expr *all_match;
    Node *condition;  // the user's, over the view
    bool condition_has_sublinks;
    const Collection *c;
    Index view_rti;
    Index bucket_rti;
    int depth;
};

Node *place_conditions(Node *node, Placement *p) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, FuncExpr) && castNode(FuncExpr, node)->funcid == p->placeholder) {
        int which =
            DatumGetInt32(castNode(Const, linitial(castNode(FuncExpr, node)->args))->constvalue);
        if (which == kMayMatch)
            return reinterpret_cast<Node *>(copy_node(p->may_match));
        if (which == kAllMatch)
            return reinterpret_cast<Node *>(copy_node(p->all_match));
        // The measurement is the only FROM item of the query at hand.
        ColumnMap map = {p->c, p->view_rti, 0, 1, p->bucket_rti, p->depth};
        return map_columns(p->condition, &map);
    }
    if (IsA(node, Query)) {
        p->depth++;
        Query *q = query_tree_mutator(castNode(Query, node), mutator(place_conditions), p, 0);
        p->depth--;
        q->hasSubLinks |= p->condition_has_sublinks;
        return reinterpret_cast<Node *>(q);
    }
    return expression_tree_mutator(node, mutator(place_conditions), p);
}

Expr *and_of(List *conditions) {
    if (conditions == NIL)
        return reinterpret_cast<Expr *>(makeBoolConst(true, false));
    return make_ands_explicit(conditions);
}

void translate_measurement_delete(Query *q, const Collection *c, const BucketConditions &bc) {
    if (list_length(q->rtable) != 1 || q->cteList != NIL)
        refuse(psprintf("cannot DELETE from time-series collection \"%s\" with USING or WITH and "
                        "a condition on measurements",
                        c->name),
               "Write the other tables into the condition: WHERE ... IN (SELECT ...).");
    Node *condition = q->jointree->quals;
    if (contain_volatile_functions(condition))
        refuse(psprintf("cannot DELETE from time-series collection \"%s\" with a volatile "
                        "condition on measurements",
                        c->name),
               "Compute the volatile values first, e.g. in a CTE-free subquery or a variable.");
    bool with_all_match = bc.all_known && bc.all_match != NIL;
    // Parsed without the hooks: it is not the user's statement.
    bool reads_doc =
        bms_is_member(c->doc_column, columns_read(condition, q->resultRelation).columns);
    const char *sql = merge_sql(c, with_all_match, reads_doc);
    int search_path = tscoll::pg::push_catalog_search_path();
    ParseState *pstate = make_parsestate(nullptr);
    pstate->p_sourcetext = sql;
    Query *merge =
        transformTopLevelStmt(pstate, linitial_node(RawStmt, raw_parser(sql, RAW_PARSE_DEFAULT)));
    free_parsestate(pstate);
    tscoll::pg::pop_search_path(search_path);
    BucketConditions placed_bc =
        bucket_conditions(q->jointree->quals, c, q->resultRelation, merge->resultRelation);

    Placement p = {placeholder_function(),
                   and_of(placed_bc.may_match),
                   with_all_match ? and_of(placed_bc.all_match) : nullptr,
                   condition,
                   checkExprHasSubLink(condition),
                   c,
                   static_cast<Index>(q->resultRelation),
                   static_cast<Index>(merge->resultRelation),
                   0};
    Query *placed = query_tree_mutator(merge, mutator(place_conditions), &p, 0);
    rt_fetch(placed->resultRelation, placed->rtable)->checkAsUser = c->owner;
    // A distributed collection's MERGE reads the bucket table as its source
    // too, as the owner, like its target.
    ListCell *lc;
    foreach (lc, placed->rtable) {
        auto *rte = static_cast<RangeTblEntry *>(lfirst(lc));
        if (rte->rtekind != RTE_SUBQUERY)
            continue;
        ListCell *inner;
        foreach (inner, rte->subquery->rtable) {
            auto *source = static_cast<RangeTblEntry *>(lfirst(inner));
            if (source->rtekind == RTE_RELATION && source->relid == c->bucket_table)
                source->checkAsUser = c->owner;
        }
    }
    placed->rtable = lappend(placed->rtable, rt_fetch(q->resultRelation, q->rtable));
    move_returning(q, q->resultRelation, rt_fetch(q->resultRelation, q->rtable)->relid, placed);
    placed->canSetTag = q->canSetTag;
    placed->queryId = q->queryId;
    placed->stmt_location = q->stmt_location;
    placed->stmt_len = q->stmt_len;
    *q = *placed;
}

void translate_delete(Query *q, const Collection *c) {
    ColumnUse use = columns_read(reinterpret_cast<Node *>(q->jointree), q->resultRelation);
    if (use.current_of)
        refuse(
            psprintf("WHERE CURRENT OF is not supported on time-series collection \"%s\"", c->name),
            "Delete by a condition instead.");
    if (use.whole_row)
        refuse(psprintf("cannot DELETE from time-series collection \"%s\" with a condition on "
                        "whole rows",
                        c->name),
               "Write the condition on the columns.");
    BucketConditions bc =
        bucket_conditions(q->jointree->quals, c, q->resultRelation, q->resultRelation);
    if (bc.measurements)
        translate_measurement_delete(q, c, bc);
    else
        retarget(q, c);
}

}  // namespace tscoll::pg::dml

// tscoll._remove_measurements(_id objectid, min_time timestamptz, stored
// bytea, positions bigint[], time_field text, control jsonb, OUT control
// jsonb, OUT data bytea): the bucket row without the measurements at
// `positions`, numbered from 1 in unpacking order (WITH ORDINALITY); a
// tail row stays one.
TSCOLL_FUNCTION(tscoll_remove_measurements) {
    // 0.1.0's SQL declared five arguments, until ALTER EXTENSION UPDATE.
    if (PG_NARGS() < 6)
        tscoll::pg::pg_call([] {
            ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                            errmsg("tscoll's SQL objects are older than its library"),
                            errhint("Run ALTER EXTENSION tscoll UPDATE.")));
        });
    const auto *id = reinterpret_cast<const tscoll::ObjectId *>(PG_GETARG_POINTER(0));
    TimestampTz min_time = PG_GETARG_TIMESTAMPTZ(1);
    bytea *stored = tscoll::pg::pg_call([&] { return PG_GETARG_BYTEA_PP(2); });
    ArrayType *array = tscoll::pg::pg_call([&] { return PG_GETARG_ARRAYTYPE_P(3); });
    text *time_field_text = tscoll::pg::pg_call([&] { return PG_GETARG_TEXT_PP(4); });
    Jsonb *stored_control = tscoll::pg::pg_call([&] { return PG_GETARG_JSONB_P(5); });
    Datum *elements = nullptr;
    bool *nulls = nullptr;
    int n = 0;
    tscoll::pg::pg_call([&] {
        deconstruct_array(array, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elements, &nulls,
                          &n);
    });
    std::vector<uint32_t> positions;
    for (int i = 0; i < n; i++) {
        int64 position = DatumGetInt64(elements[i]);
        if (nulls[i] || position < 1 || position > UINT32_MAX)
            throw tscoll::Error(tscoll::ErrorCode::BadValue,
                                "measurement positions are numbered from 1");
        positions.push_back(static_cast<uint32_t>(position - 1));
    }
    std::string time_field(VARDATA_ANY(time_field_text), VARSIZE_ANY_EXHDR(time_field_text));
    tscoll::Bucket rest =
        tscoll::without_measurements(*id, tscoll::pg::to_unix_micros(min_time), time_field,
                                     tscoll::pg::decode_bucket(*id, stored), std::move(positions));
    Jsonb *control = tscoll::pg::control_jsonb(
        tscoll::control_after_removal(rest, tscoll::pg::jsonb_to_value(stored_control), time_field),
        CurrentMemoryContext);
    Datum data = tscoll::pg::bytea_datum(rest.encode(), CurrentMemoryContext);
    return tscoll::pg::pg_call([&] {
        TupleDesc desc;
        if (get_call_result_type(fcinfo, nullptr, &desc) != TYPEFUNC_COMPOSITE)
            elog(ERROR, "tscoll._remove_measurements must return a record");
        Datum values[] = {PointerGetDatum(control), data};
        bool isnull[] = {false, false};
        return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, isnull));
    });
}
