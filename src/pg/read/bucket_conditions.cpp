// The bucket-level tests the planner derives from a query's conditions
// (plan/read_plan.cpp; doc/REFERENCE.md §3.4, SELECT):
// tscoll._control_may_match for measurement fields, tscoll._time_shift for
// the span-widened time bounds.
extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
}

#include "pg/guard.hpp"

namespace {

// control.<bound>.<field> when it is a number, else nullptr.
Numeric control_number(Jsonb *control, const char *bound, text *field) {
    JsonbValue key;
    key.type = jbvString;
    key.val.string.val = const_cast<char *>(bound);
    key.val.string.len = static_cast<int>(strlen(bound));
    JsonbValue *side = findJsonbValueFromContainer(&control->root, JB_FOBJECT, &key);
    if (side == nullptr || side->type != jbvBinary)
        return nullptr;
    key.val.string.val = VARDATA_ANY(field);
    key.val.string.len = static_cast<int>(VARSIZE_ANY_EXHDR(field));
    JsonbValue *value = findJsonbValueFromContainer(side->val.binary.data, JB_FOBJECT, &key);
    return value != nullptr && value->type == jbvNumeric ? value->val.numeric : nullptr;
}

// Whether some value between min and max compares to the bound as the
// strategy says, given how min and max compare to it (<0, 0, >0).
bool range_may_match(int strategy, int min_vs_bound, int max_vs_bound) {
    switch (strategy) {
        case BTLessStrategyNumber:
            return min_vs_bound < 0;
        case BTLessEqualStrategyNumber:
            return min_vs_bound <= 0;
        case BTEqualStrategyNumber:
            return min_vs_bound <= 0 && max_vs_bound >= 0;
        case BTGreaterEqualStrategyNumber:
            return max_vs_bound >= 0;
        case BTGreaterStrategyNumber:
            return max_vs_bound > 0;
        default:
            return true;
    }
}

int numeric_compare(Numeric a, Numeric b) {
    return DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(a), NumericGetDatum(b)));
}

double as_float8(Numeric n) {
    return DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(n)));
}

// A jsonb bound that is a number, else nullptr.
Numeric jsonb_number(Jsonb *bound) {
    JsonbValue scalar;
    if (!JsonbExtractScalar(&bound->root, &scalar) || scalar.type != jbvNumeric)
        return nullptr;
    return scalar.val.numeric;
}

}  // namespace

// tscoll._control_may_match(control jsonb, field text, strategy integer,
// bound float8 | numeric | jsonb) RETURNS boolean. False only when every
// value of the field in the bucket is a number (control.min and .max both
// are: numbers sort below every other type but null) and none can compare
// to the bound as asked. float8 bounds compare as float8, since the
// condition compares (doc->>'f')::float8, and rounding to float8 keeps order.
extern "C" {
PG_FUNCTION_INFO_V1(tscoll_control_may_match);
}
Datum tscoll_control_may_match(PG_FUNCTION_ARGS) {
    Jsonb *control = PG_GETARG_JSONB_P(0);
    text *field = PG_GETARG_TEXT_PP(1);
    int strategy = PG_GETARG_INT32(2);
    Numeric min = control_number(control, "min", field);
    Numeric max = control_number(control, "max", field);
    if (min == nullptr || max == nullptr)
        PG_RETURN_BOOL(true);
    Oid bound_type = get_fn_expr_argtype(fcinfo->flinfo, 3);
    if (bound_type == FLOAT8OID) {
        double bound = PG_GETARG_FLOAT8(3);
        PG_RETURN_BOOL(range_may_match(strategy, float8_cmp_internal(as_float8(min), bound),
                                       float8_cmp_internal(as_float8(max), bound)));
    }
    Numeric bound =
        bound_type == NUMERICOID ? PG_GETARG_NUMERIC(3) : jsonb_number(PG_GETARG_JSONB_P(3));
    if (bound == nullptr)
        PG_RETURN_BOOL(true);
    PG_RETURN_BOOL(
        range_may_match(strategy, numeric_compare(min, bound), numeric_compare(max, bound)));
}

// tscoll._time_shift(t timestamptz, seconds bigint) RETURNS timestamptz:
// t moved by whole seconds, saturating at -infinity and infinity where
// t + interval would fail. A widened bound past PostgreSQL's range then
// implies nothing, as it should, instead of failing the query.
extern "C" {
PG_FUNCTION_INFO_V1(tscoll_time_shift);
}
Datum tscoll_time_shift(PG_FUNCTION_ARGS) {
    TimestampTz t = PG_GETARG_TIMESTAMPTZ(0);
    int64 seconds = PG_GETARG_INT64(1);
    int64 micros;
    TimestampTz shifted;
    if (TIMESTAMP_NOT_FINITE(t))
        PG_RETURN_TIMESTAMPTZ(t);
    if (pg_mul_s64_overflow(seconds, USECS_PER_SEC, &micros) ||
        pg_add_s64_overflow(t, micros, &shifted) || !IS_VALID_TIMESTAMP(shifted)) {
        if (seconds < 0)
            TIMESTAMP_NOBEGIN(shifted);
        else
            TIMESTAMP_NOEND(shifted);
    }
    PG_RETURN_TIMESTAMPTZ(shifted);
}
