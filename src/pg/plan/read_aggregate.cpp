// Aggregation in buckets and the latest time groups (doc/REFERENCE.md
// §3.4, SELECT; doc/ARCHITECTURE.md, Reading): a rewrite of the reading
// query that read_plan.cpp tries before lazy unpacking.
#include "pg/plan/collection_read.hpp"
#include "core/float8_aggregate.hpp"
#include "pg/read/typed_fields.hpp"
#include "pg/read/unpack_call.hpp"

extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/scansup.h"
#include "utils/numeric.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
}

#include <initializer_list>

#include "pg/node_trees.hpp"

namespace tscoll::pg::reads {

using tscoll::Float8Aggregate;
using unpack_call::aggregate_letter;
using unpack_call::kNumbersOnly;

// Aggregation in buckets (doc/ARCHITECTURE.md). A query that aggregates
// measurement fields, grouped by date_trunc(unit, time) and meta at most,
// filtered by time bounds and meta at most, reads each bucket as partial
// aggregates per time group (_unpack_groups) and combines them:
//   max(x) -> max(partial max)         sum(x) -> sum(partial sum)
//   min(x) -> min(partial min)         avg(x) -> _avg_of_partials(state)
//   count(x), count(*) -> _count_of_partials(partial count)
// where x is (doc->>'f')::float8. No measurement becomes a row.

// How the query groups time. Exact groupings (date_trunc, date_bin,
// time_bucket) are each measurement's group start, which _unpack_groups
// computes and the query then reads as the view's time column. Others that
// depend on time only through fixed-width bins (Grafana's
// floor(extract(epoch from time) / n) * n) stay in the query, which applies
// them to each bin's start: the same value as for any time in the bin.
struct TimeGrouping {
    Node *expr = nullptr;  // as the query groups by it
    Node *unit = nullptr;  // date_trunc's, and its time zone when given
    Node *zone = nullptr;
    Node *stride = nullptr;  // the bins', with their origin
    Node *origin = nullptr;
    bool exact = false;  // expr is the group start
};

struct BucketAggregation {
    const CollectionRead *read;
    const char *time_field;
    const char *meta_field;  // nullptr: the collection has none
    TimeGrouping grouping;
    Comparison lower = {}, upper = {};
    bool has_lower = false, has_upper = false;
    List *kept = NIL;   // the query's conditions that stay: on meta only
    List *specs = NIL;  // "<Float8Aggregate letter><field>", a view column each
    bool reads_fields = false;
    bool refused = false;
};

// An argument of a time grouping that the view can evaluate per bucket:
// nothing of the query's rows, nothing volatile.
bool per_query(Node *node) {
    return !contain_vars_of_level(node, 0) && !contain_volatile_functions(node) &&
           !checkExprHasSubLink(node);
}

Node *timestamptz_const(TimestampTz t) {
    return reinterpret_cast<Node *>(makeConst(TIMESTAMPTZOID, -1, InvalidOid, sizeof(TimestampTz),
                                              TimestampTzGetDatum(t), false, FLOAT8PASSBYVAL));
}

Node *seconds_interval(int64 seconds) {
    auto *interval = static_cast<Interval *>(palloc0(sizeof(Interval)));
    interval->time = seconds * USECS_PER_SEC;
    return reinterpret_cast<Node *>(makeConst(INTERVALOID, -1, InvalidOid, sizeof(Interval),
                                              PointerGetDatum(interval), false, false));
}

// date_trunc(unit, time [, zone]), date_bin(stride, time, origin) and
// tscoll.time_bucket(stride, time [, origin]).
bool exact_grouping(Node *node, const CollectionRead &read, TimeGrouping *g) {
    if (!IsA(node, FuncExpr))
        return false;
    auto *f = castNode(FuncExpr, node);
    List *args = f->args;
    if (f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ) {
        if (const_text(static_cast<Node *>(linitial(args))) == nullptr ||
            !is_column(static_cast<Node *>(lsecond(args)), read, read.time_column))
            return false;
        g->unit = static_cast<Node *>(linitial(args));
    } else if (f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT) {
        if (const_text(static_cast<Node *>(linitial(args))) == nullptr ||
            !is_column(static_cast<Node *>(lsecond(args)), read, read.time_column) ||
            !per_query(static_cast<Node *>(lthird(args))))
            return false;
        g->unit = static_cast<Node *>(linitial(args));
        g->zone = static_cast<Node *>(lthird(args));
    } else if (f->funcid == F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ ||
               is_tscoll_function(f->funcid, "time_bucket", 2) ||
               is_tscoll_function(f->funcid, "time_bucket", 3)) {
        if (!is_column(static_cast<Node *>(lsecond(args)), read, read.time_column) ||
            !per_query(static_cast<Node *>(linitial(args))) ||
            (list_length(args) == 3 && !per_query(static_cast<Node *>(lthird(args)))))
            return false;
        g->stride = static_cast<Node *>(linitial(args));
        // time_bucket's default origin is TimescaleDB's: Monday 2000-01-03, UTC.
        g->origin = list_length(args) == 3 ? static_cast<Node *>(lthird(args))
                                           : timestamptz_const(2 * USECS_PER_DAY);
    } else {
        return false;
    }
    g->expr = node;
    g->exact = true;
    return true;
}

struct EpochBins {
    const CollectionRead *read;
    int64 seconds = 0;  // floor(extract(epoch from time) / seconds) found
    int time_reads = 0;
    int binned_reads = 0;
};

// floor(extract(epoch from time) / n), n a whole number of seconds.
int64 epoch_bin_seconds(Node *node, const CollectionRead &read) {
    if (!IsA(node, FuncExpr) || castNode(FuncExpr, node)->funcid != F_FLOOR_NUMERIC)
        return 0;
    Node *quotient = static_cast<Node *>(linitial(castNode(FuncExpr, node)->args));
    if (!IsA(quotient, OpExpr) || list_length(castNode(OpExpr, quotient)->args) != 2)
        return 0;
    auto *div = castNode(OpExpr, quotient);
    set_opfuncid(div);
    Node *epoch = static_cast<Node *>(linitial(div->args));
    if (div->opfuncid != F_NUMERIC_DIV || !IsA(epoch, FuncExpr) ||
        castNode(FuncExpr, epoch)->funcid != F_EXTRACT_TEXT_TIMESTAMPTZ)
        return 0;
    const char *field = const_text(static_cast<Node *>(linitial(castNode(FuncExpr, epoch)->args)));
    if (field == nullptr || pg_strcasecmp(field, "epoch") != 0 ||
        !is_column(static_cast<Node *>(lsecond(castNode(FuncExpr, epoch)->args)), read,
                   read.time_column))
        return 0;
    Node *n = eval_const_expressions(nullptr, copy_node(static_cast<Node *>(lsecond(div->args))));
    if (!IsA(n, Const) || castNode(Const, n)->constisnull ||
        castNode(Const, n)->consttype != NUMERICOID)
        return 0;
    // Whole seconds up to a year: numeric's division then never rounds the
    // last microsecond of a bin up into the next.
    Datum whole = DirectFunctionCall1(numeric_floor, castNode(Const, n)->constvalue);
    if (!DatumGetBool(DirectFunctionCall2(numeric_eq, whole, castNode(Const, n)->constvalue)))
        return 0;
    bool error = false;
    int64 seconds = numeric_int4_opt_error(DatumGetNumeric(whole), &error);
    return !error && seconds >= 1 && seconds <= 366 * SECS_PER_DAY ? seconds : 0;
}

bool find_epoch_bins(Node *node, EpochBins *bins) {
    if (node == nullptr)
        return false;
    if (int64 seconds = epoch_bin_seconds(node, *bins->read)) {
        if (bins->seconds != 0 && bins->seconds != seconds)
            return true;
        bins->seconds = seconds;
        bins->binned_reads++;
        bins->time_reads++;
        return false;
    }
    if (IsA(node, Var)) {
        bins->time_reads++;
        return !is_column(node, *bins->read, bins->read->time_column);
    }
    return expression_tree_walker(node, walker(find_epoch_bins), bins);
}

// A grouping that reads time only through floor(extract(epoch from time) /
// n): the same for every time of an n-second bin from the epoch.
bool binned_grouping(Node *node, const CollectionRead &read, TimeGrouping *g) {
    EpochBins bins = {&read};
    if (contain_volatile_functions(node) || checkExprHasSubLink(node) ||
        find_epoch_bins(node, &bins) || bins.seconds == 0 || bins.time_reads != bins.binned_reads)
        return false;
    g->expr = node;
    g->stride = seconds_interval(bins.seconds);
    g->origin = timestamptz_const(-(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);
    g->exact = false;
    return true;
}

// Time bounds of timestamptz, at most one on each side, and meta conditions.
bool split_conditions(BucketAggregation *a) {
    ListCell *lc;
    foreach (lc, make_ands_implicit(reinterpret_cast<Expr *>(a->read->query->jointree->quals))) {
        Node *qual = static_cast<Node *>(lfirst(lc));
        Comparison c;
        if (reads_only_meta(qual, *a->read)) {
            a->kept = lappend(a->kept, qual);
            continue;
        }
        if (!as_comparison(qual, &c) || !is_column(c.subject, *a->read, a->read->time_column) ||
            c.subject_type != TIMESTAMPTZOID || exprType(c.bound) != TIMESTAMPTZOID)
            return false;
        bool lower = c.strategy >= BTEqualStrategyNumber;
        bool upper = c.strategy <= BTEqualStrategyNumber;
        if ((lower && a->has_lower) || (upper && a->has_upper))
            return false;
        if (lower)
            a->lower = c, a->has_lower = true;
        if (upper)
            a->upper = c, a->has_upper = true;
    }
    return true;
}

bool groups_by_time_and_meta(BucketAggregation *a) {
    Query *q = a->read->query;
    ListCell *lc;
    foreach (lc, q->groupClause) {
        auto *expr = reinterpret_cast<Node *>(
            get_sortgroupclause_expr(lfirst_node(SortGroupClause, lc), q->targetList));
        if (reads_only_meta(expr, *a->read))
            continue;
        if (a->grouping.expr != nullptr) {
            if (!equal(a->grouping.expr, expr))
                return false;
            continue;
        }
        if (!exact_grouping(expr, *a->read, &a->grouping) &&
            !binned_grouping(expr, *a->read, &a->grouping))
            return false;
    }
    return true;
}

// The partial aggregate that stands for `agg` ("<letter><field>"), or
// nullptr when there is none.
const char *partial_of(Aggref *agg, BucketAggregation *a) {
    if (agg->agglevelsup != 0 || agg->aggfilter != nullptr || agg->aggorder != NIL ||
        agg->aggdistinct != NIL || agg->aggkind != AGGKIND_NORMAL)
        return nullptr;
    if (agg->aggfnoid == F_COUNT_ && agg->aggstar)
        return psprintf("%c", static_cast<char>(Float8Aggregate::Rows));
    char letter = static_cast<char>(agg->aggfnoid == F_MAX_FLOAT8   ? Float8Aggregate::Max
                                    : agg->aggfnoid == F_MIN_FLOAT8 ? Float8Aggregate::Min
                                    : agg->aggfnoid == F_SUM_FLOAT8 ? Float8Aggregate::Sum
                                    : agg->aggfnoid == F_AVG_FLOAT8 ? Float8Aggregate::Avg
                                    : agg->aggfnoid == F_COUNT_ANY  ? Float8Aggregate::Count
                                                                    : Float8Aggregate{0});
    if (letter == 0 || list_length(agg->args) != 1)
        return nullptr;
    Node *arg = reinterpret_cast<Node *>(linitial_node(TargetEntry, agg->args)->expr);
    // A float8 typed field's column: its numbers, other values left out.
    char typed = 0;
    const char *key = typed_field_key(arg, *a->read, &typed);
    if (key != nullptr && typed != static_cast<char>(TypedField::Float8))
        return nullptr;
    if (key == nullptr && IsA(arg, CoerceViaIO) &&
        castNode(CoerceViaIO, arg)->resulttype == FLOAT8OID)
        key = field_key(reinterpret_cast<Node *>(castNode(CoerceViaIO, arg)->arg), *a->read,
                        F_JSONB_OBJECT_FIELD_TEXT);
    // The time and meta fields read differently through doc: left to _unpack.
    if (key == nullptr || strcmp(key, a->time_field) == 0 ||
        (a->meta_field != nullptr && strcmp(key, a->meta_field) == 0))
        return nullptr;
    return typed != 0 ? psprintf("%c%c%s", kNumbersOnly, letter, key)
                      : psprintf("%c%s", letter, key);
}

// The view column, after its own, of the partial aggregate `spec`.
AttrNumber partial_column(BucketAggregation *a, const char *spec) {
    int i = 0;
    ListCell *lc;
    foreach (lc, a->specs) {
        if (strcmp(strVal(lfirst(lc)), spec) == 0)
            return list_length(a->read->view->targetList) + 1 + i;
        i++;
    }
    a->specs = lappend(a->specs, makeString(pstrdup(spec)));
    return list_length(a->read->view->targetList) + 1 + i;
}

// Whether the outputs read only aggregates with a partial, the time group
// and meta; collects the partials.
bool check_outputs(Node *node, BucketAggregation *a) {
    if (node == nullptr || a->refused)
        return false;
    if (a->grouping.expr != nullptr && equal(node, a->grouping.expr))
        return false;
    if (IsA(node, Aggref)) {
        const char *spec = partial_of(castNode(Aggref, node), a);
        a->refused = spec == nullptr;
        if (spec != nullptr) {
            a->reads_fields |= aggregate_letter(spec) != static_cast<char>(Float8Aggregate::Rows);
            partial_column(a, spec);
        }
        return false;
    }
    if (IsA(node, Var)) {
        a->refused = castNode(Var, node)->varlevelsup == 0 &&
                     !is_column(node, *a->read, a->read->meta_column);
        return false;
    }
    return expression_tree_walker(node, walker(check_outputs), a);
}

// The type of _unpack_groups' column for the partial aggregate `letter`.
Oid partial_type(char letter) {
    auto kind = static_cast<Float8Aggregate>(letter);
    return kind == Float8Aggregate::Avg ? FLOAT8ARRAYOID : counts(kind) ? INT8OID : FLOAT8OID;
}

Aggref *combined(Aggref *agg, BucketAggregation *a) {
    const char *spec = partial_of(agg, a);
    Aggref *result = copy_node(agg);
    Oid type = partial_type(aggregate_letter(spec));
    Var *partial = makeVar(a->read->view_rti, partial_column(a, spec), type, -1, InvalidOid, 0);
    result->args =
        list_make1(makeTargetEntry(reinterpret_cast<Expr *>(partial), 1, nullptr, false));
    result->aggargtypes = list_make1_oid(type);
    result->aggtranstype = InvalidOid;
    auto kind = static_cast<Float8Aggregate>(aggregate_letter(spec));
    if (kind == Float8Aggregate::Avg || counts(kind)) {
        result->aggfnoid = tscoll_function(
            kind == Float8Aggregate::Avg ? "_avg_of_partials" : "_count_of_partials", 1, &type);
        result->aggstar = false;
    }
    return result;
}

Node *read_partials(Node *node, BucketAggregation *a) {
    if (node == nullptr)
        return nullptr;
    if (a->grouping.exact && equal(node, a->grouping.expr))
        return reinterpret_cast<Node *>(
            makeVar(a->read->view_rti, a->read->time_column, TIMESTAMPTZOID, -1, InvalidOid, 0));
    if (a->grouping.expr != nullptr && equal(node, a->grouping.expr))
        return copy_node(node);  // applied to each group's start
    if (IsA(node, Aggref))
        return reinterpret_cast<Node *>(combined(castNode(Aggref, node), a));
    return expression_tree_mutator(node, mutator(read_partials), a);
}

// The bound of one side, moved into the view, and its strictness; NULL
// strictness says there is none.
List *bound_arguments(const Comparison &c, bool present) {
    if (!present)
        return list_make2(makeNullConst(TIMESTAMPTZOID, -1, InvalidOid),
                          makeNullConst(BOOLOID, -1, InvalidOid));
    Node *bound = copy_node(c.bound);
    IncrementVarSublevelsUp(bound, 1, 1);
    bool strict = c.strategy == BTLessStrategyNumber || c.strategy == BTGreaterStrategyNumber;
    return list_make2(bound, makeBoolConst(strict, false));
}

// An argument of the grouping, moved into the view.
Node *into_view(Node *node) {
    Node *moved = copy_node(node);
    IncrementVarSublevelsUp(moved, 1, 1);
    return moved;
}

void unpack_groups(BucketAggregation *a, Oid fn) {
    const CollectionRead &read = *a->read;
    const TimeGrouping &g = a->grouping;
    // An epoch grouping's bins: unit 'epoch' (read/unpack_groups.cpp, Bins).
    Node *unit =
        g.unit != nullptr ? copy_node(g.unit)
        : !g.exact && g.stride != nullptr
            ? reinterpret_cast<Node *>(makeConst(TEXTOID, -1, DEFAULT_COLLATION_OID, -1,
                                                 CStringGetTextDatum("epoch"), false, false))
            : reinterpret_cast<Node *>(makeNullConst(TEXTOID, -1, DEFAULT_COLLATION_OID));
    List *args = unpack_arguments(read);
    args = lappend(args, unit);
    args = lappend(args, text_array(a->specs));
    args = list_concat(args, bound_arguments(a->lower, a->has_lower));
    args = list_concat(args, bound_arguments(a->upper, a->has_upper));
    if (g.stride != nullptr) {
        args = lappend(args, into_view(g.stride));
        args = lappend(args, into_view(g.origin));
    } else if (g.zone != nullptr) {
        args = lappend(args, makeNullConst(INTERVALOID, -1, InvalidOid));
        args = lappend(args, makeNullConst(TIMESTAMPTZOID, -1, InvalidOid));
        args = lappend(args, into_view(g.zone));
    }
    List *names = NIL, *types = NIL, *collations = NIL;
    ListCell *lc;
    foreach (lc, a->specs) {
        const char *spec = strVal(lfirst(lc));
        char letter = aggregate_letter(spec);
        const char *field = unpack_call::spec_field(spec);
        const char *aggregate = aggregate_name(static_cast<Float8Aggregate>(letter));
        names = lappend(names, makeString(field[0] != '\0' ? psprintf("%s_%s", aggregate, field)
                                                           : pstrdup(aggregate)));
        types = lappend_oid(types, partial_type(letter));
        collations = lappend_oid(collations, InvalidOid);
    }
    FuncExpr *call =
        makeFuncExpr(fn, RECORDOID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL);
    replace_unpacking(read, call, names, types, collations);
}

// ---------------------------------------------------------------------------
// The latest groups: ORDER BY date_trunc(unit, time) DESC LIMIT k, grouped by
// that alone and filtered by time bounds alone, needs only the buckets that
// reach the k-th latest group among the buckets' max_time (exact in control:
// each is a measurement's time, so its group is in the result). A group at
// or after that one holds only measurements at or after it.

struct LatestGroups {
    const BucketAggregation *aggregation;
    Node *lower, *upper;    // the bounds, for $1 and $2
    Node *stride, *origin;  // the bins', for $3 and $4
};

Node *bounds_for_params(Node *node, LatestGroups *latest) {
    if (node == nullptr)
        return nullptr;
    if (IsA(node, Param) && castNode(Param, node)->paramkind == PARAM_EXTERN) {
        Node *const by_id[] = {latest->lower, latest->upper, latest->stride, latest->origin};
        Node *bound = copy_node(by_id[castNode(Param, node)->paramid - 1]);
        IncrementVarSublevelsUp(bound, 2, 1);  // into the view, then into the sublink
        return bound;
    }
    if (IsA(node, Query))
        return reinterpret_cast<Node *>(
            query_tree_mutator(castNode(Query, node), mutator(bounds_for_params), latest, 0));
    return expression_tree_mutator(node, mutator(bounds_for_params), latest);
}

// Whether the grouping orders its groups as their bins' starts, one value
// per bin: floor(extract(epoch from time) / n) times a positive constant,
// and to_timestamp of that.
bool ordered_as_bins(Node *node, const CollectionRead &read) {
    if (IsA(node, FuncExpr)) {
        auto *f = castNode(FuncExpr, node);
        if ((f->funcid == F_TO_TIMESTAMP_FLOAT8 || f->funcid == F_FLOAT8_NUMERIC) &&
            list_length(f->args) == 1)
            return ordered_as_bins(static_cast<Node *>(linitial(f->args)), read);
    }
    if (IsA(node, OpExpr) && list_length(castNode(OpExpr, node)->args) == 2) {
        auto *op = castNode(OpExpr, node);
        set_opfuncid(op);
        Node *factor =
            eval_const_expressions(nullptr, copy_node(static_cast<Node *>(lsecond(op->args))));
        return op->opfuncid == F_NUMERIC_MUL && IsA(factor, Const) &&
               !castNode(Const, factor)->constisnull &&
               castNode(Const, factor)->consttype == NUMERICOID &&
               DatumGetInt32(DirectFunctionCall2(numeric_cmp, castNode(Const, factor)->constvalue,
                                                 DirectFunctionCall1(int4_numeric, 0))) > 0 &&
               ordered_as_bins(static_cast<Node *>(linitial(op->args)), read);
    }
    return epoch_bin_seconds(node, read) > 0;
}

// Whether every group starts at or before its measurements, in the order
// of the groups: date_trunc by a unit of at most an hour (date_trunc then
// keeps a time's own UTC offset), and bins.
bool groups_start_in_order(const TimeGrouping &g, const CollectionRead &read);

// The unit of date_trunc when it is at most an hour (date_trunc then keeps a
// time's own UTC offset, so a group starts at or before its measurements).
const char *short_unit(const TimeGrouping &g) {
    const char *unit = const_text(g.unit);
    if (unit == nullptr)
        return nullptr;
    int value = 0;
    char *lower = downcase_truncate_identifier(unit, strlen(unit), false);
    if (DecodeUnits(0, lower, &value) != UNITS ||
        (value != DTK_HOUR && value != DTK_MINUTE && value != DTK_SECOND && value != DTK_MILLISEC &&
         value != DTK_MICROSEC))
        return nullptr;
    return unit;
}

bool groups_start_in_order(const TimeGrouping &g, const CollectionRead &read) {
    if (g.unit != nullptr)
        return g.zone == nullptr && short_unit(g) != nullptr;
    return g.stride != nullptr && (g.exact || ordered_as_bins(g.expr, read));
}

// The value of a LIMIT or OFFSET that folds to a constant, else -1.
int64 constant_count(Node *node) {
    Node *folded = eval_const_expressions(nullptr, copy_node(node));
    if (!IsA(folded, Const) || castNode(Const, folded)->constisnull)
        return -1;
    return DatumGetInt64(castNode(Const, folded)->constvalue);
}

bool reads_a_column(Node *node, void *) {
    if (node == nullptr)
        return false;
    if (IsA(node, Var) || IsA(node, PlaceHolderVar))
        return true;
    return expression_tree_walker(node, walker(reads_a_column), nullptr);
}

// k (LIMIT plus OFFSET) when the query asks for the k latest time groups.
int64 latest_groups_asked(const BucketAggregation &a) {
    Query *q = a.read->query;
    // A window function may read groups before the k latest (lag()).
    if (a.grouping.expr == nullptr || a.kept != NIL || q->havingQual != nullptr ||
        q->hasWindowFuncs || q->distinctClause != NIL || list_length(q->groupClause) != 1 ||
        q->sortClause == NIL || q->limitOption != LIMIT_OPTION_COUNT || q->limitCount == nullptr ||
        !groups_start_in_order(a.grouping, *a.read))
        return 0;
    auto *sort = linitial_node(SortGroupClause, q->sortClause);
    Oid opfamily, type;
    int16 strategy;
    if (sort->tleSortGroupRef != linitial_node(SortGroupClause, q->groupClause)->tleSortGroupRef ||
        !get_ordering_op_properties(sort->sortop, &opfamily, &type, &strategy) ||
        strategy != BTGreaterStrategyNumber)
        return 0;
    // The bounds and bins move into a subquery of the view: an outer
    // query's column there is not worth the levels it would need.
    for (Node *moved :
         {a.has_lower ? a.lower.bound : nullptr, a.has_upper ? a.upper.bound : nullptr,
          a.grouping.stride, a.grouping.origin})
        if (reads_a_column(moved, nullptr))
            return 0;
    int64 count = constant_count(q->limitCount);
    int64 offset = q->limitOffset != nullptr ? constant_count(q->limitOffset) : 0;
    return count > 0 && offset >= 0 && count + offset <= 100000 ? count + offset : 0;
}

const char *operator_of(int strategy) {
    static const char *const names[] = {"", "<", "<=", "=", ">=", ">"};
    return names[strategy];
}

// The SQL arguments of _unpack_groups for one bound: "$n, strict".
char *bound_sql(const Comparison &c, bool present, int param) {
    if (!present)
        return pstrdup("NULL, NULL");
    bool strict = c.strategy == BTLessStrategyNumber || c.strategy == BTGreaterStrategyNumber;
    return psprintf("$%d, %s", param, strict ? "true" : "false");
}

// The groups, within the bounds, of the measurements of the buckets `from`
// (a FROM item named l) that pass `where`: their times decoded.
char *groups_of_buckets(const BucketAggregation &a, const char *unit, const char *from,
                        const char *where) {
    bool bins = a.grouping.unit == nullptr;
    return psprintf(
        "SELECT s.time FROM %s, LATERAL tscoll._unpack_groups(l._id, l.meta, l.data, %s, %s, %s, "
        "'{n}', %s, %s%s) AS s(time timestamptz, doc jsonb, n bigint) WHERE %s",
        from, quote_literal_cstr(a.time_field),
        a.meta_field != nullptr ? quote_literal_cstr(a.meta_field) : "NULL", bins ? "NULL" : unit,
        bound_sql(a.lower, a.has_lower, 1), bound_sql(a.upper, a.has_upper, 2),
        bins ? ", $3, $4" : "", where);
}

void read_latest_groups_only(const BucketAggregation &a) {
    int64 k = latest_groups_asked(a);
    if (k == 0)
        return;
    // Groups known to exist: those of the max_time within the bounds, those
    // of the buckets that reach past the upper bound, and those of the
    // latest bucket that may hold measurements within them, the last two
    // found by decoding their times. Many series whose buckets end at the
    // same times (TSBS: every host's hour ends at :59:50) have few distinct
    // max_time groups; their latest bucket alone often holds k groups.
    StringInfoData within, lower;
    initStringInfo(&within);
    initStringInfo(&lower);
    appendStringInfoString(&lower, "true");
    if (a.has_lower)
        appendStringInfo(&lower, " AND l.max_time %s $1", operator_of(a.lower.strategy));
    // A tail's max_time is a bound, not a measurement's time.
    appendStringInfo(&within, "%s AND NOT l.control ? 'tail'", lower.data);
    bool upper = a.has_upper && a.upper.strategy != BTEqualStrategyNumber;
    if (upper)
        appendStringInfo(&within, " AND l.max_time %s $2", operator_of(a.upper.strategy));
    // The group of l.max_time, and _unpack_groups' arguments for it.
    bool bins = a.grouping.unit == nullptr;
    const char *unit = bins ? nullptr : quote_literal_cstr(short_unit(a.grouping));
    char *group = bins ? pstrdup("pg_catalog.date_bin($3, l.max_time, $4)")
                       : psprintf("pg_catalog.date_trunc(%s, l.max_time)", unit);
    char *past_upper = pstrdup("");
    if (upper)
        past_upper = psprintf(" UNION ALL %s",
                              groups_of_buckets(a, unit, "%s l",
                                                psprintf("%s AND NOT (l.max_time %s $2) AND "
                                                         "l.min_time %s $2",
                                                         lower.data, operator_of(a.upper.strategy),
                                                         operator_of(a.upper.strategy))));
    char *latest_bucket = psprintf(
        " UNION ALL %s",
        groups_of_buckets(
            a, unit,
            psprintf("(SELECT * FROM %%s l WHERE %s%s ORDER BY l.max_time DESC "
                     "LIMIT 1) l",
                     lower.data,
                     upper ? psprintf(" AND l.min_time %s $2", operator_of(a.upper.strategy)) : ""),
            "true"));
    // %%s: the bucket table, filled in by analysed_bucket_condition.
    // An epoch grouping may round the last microseconds of a bin into the
    // next (Bins): the buckets of one bin more are read.
    char *condition = psprintf(
        "b.max_time >= coalesce((SELECT DISTINCT g FROM (SELECT %s AS g FROM %%s l "
        "WHERE %s%s%s) AS known ORDER BY 1 DESC OFFSET " INT64_FORMAT " LIMIT 1), '-infinity')%s",
        group, within.data, past_upper, latest_bucket, k - 1,
        bins && !a.grouping.exact ? " - $3" : "");
    LatestGroups latest = {&a, a.has_lower ? a.lower.bound : nullptr,
                           a.has_upper ? a.upper.bound : nullptr, a.grouping.stride,
                           a.grouping.origin};
    Node *qual =
        bounds_for_params(analysed_bucket_condition(*a.read, condition, bins ? 4 : 2), &latest);
    FromExpr *from = a.read->view->jointree;
    from->quals = from->quals == nullptr
                      ? qual
                      : reinterpret_cast<Node *>(make_andclause(list_make2(from->quals, qual)));
    a.read->view->hasSubLinks = true;
}

// Whether the view now reads the partial aggregates of its buckets.
bool aggregate_in_buckets(const CollectionRead &read) {
    Query *q = read.query;
    // Window functions run over the combined groups (lag() for rates).
    if (q->commandType != CMD_SELECT || !q->hasAggs || q->hasTargetSRFs || q->hasSubLinks ||
        q->groupingSets != NIL || q->setOperations != nullptr || q->rowMarks != NIL ||
        list_length(q->jointree->fromlist) != 1 ||
        !IsA(linitial(q->jointree->fromlist), RangeTblRef) ||
        static_cast<Index>(linitial_node(RangeTblRef, q->jointree->fromlist)->rtindex) !=
            read.view_rti)
        return false;
    List *unpack_args = unpack_arguments(read);
    BucketAggregation a = {
        &read, const_text(static_cast<Node *>(list_nth(unpack_args, unpack_call::kTimeField))),
        const_text(static_cast<Node *>(list_nth(unpack_args, unpack_call::kMetaField)))};
    Oid types[14];
    for (int i = 0; i < 5; i++)
        types[i] = exprType(static_cast<Node *>(list_nth(unpack_args, i)));
    Oid rest[] = {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID, BOOLOID, TIMESTAMPTZOID,
                  BOOLOID, INTERVALOID,  TIMESTAMPTZOID, TEXTOID};
    memcpy(types + 5, rest, sizeof(rest));
    if (a.time_field == nullptr || !split_conditions(&a) || !groups_by_time_and_meta(&a))
        return false;
    int nargs = a.grouping.zone != nullptr ? 14 : a.grouping.stride != nullptr ? 13 : 11;
    Oid fn = tscoll_function("_unpack_groups", nargs, types);
    if (!OidIsValid(fn))
        return false;
    check_outputs(reinterpret_cast<Node *>(q->targetList), &a);
    check_outputs(q->havingQual, &a);
    // count(*) alone, by meta: _bucket_slots reads control only.
    if (a.refused ||
        (!a.reads_fields && a.grouping.expr == nullptr && !a.has_lower && !a.has_upper))
        return false;
    q->targetList = castNode(List, read_partials(reinterpret_cast<Node *>(q->targetList), &a));
    q->havingQual = read_partials(q->havingQual, &a);
    q->jointree->quals = reinterpret_cast<Node *>(make_ands_explicit(a.kept));
    if (a.kept == NIL)
        q->jointree->quals = nullptr;
    read_latest_groups_only(a);
    unpack_groups(&a, fn);
    return true;
}

}  // namespace tscoll::pg::reads
