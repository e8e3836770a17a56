// The bucket-level tests the planner derives from a query's conditions
// (plan/read_plan.cpp; doc/REFERENCE.md §3.4, SELECT):
// tscoll._control_may_match for measurement fields, tscoll._time_shift for
// the span-widened time bounds, tscoll._jsonb_spellings for meta subfields
// compared with a value known only when the query runs.
#include "pg/read/bucket_conditions.hpp"

extern "C" {
#include "postgres.h"
#include "access/stratnum.h"
#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
}

#include "pg/guard.hpp"

List *tscoll::pg::jsonb_spellings(const char *text) {
    StringInfoData quoted;
    initStringInfo(&quoted);
    escape_json(&quoted, text);
    List *values =
        list_make1(DatumGetPointer(DirectFunctionCall1(jsonb_in, CStringGetDatum(quoted.data))));
    size_t length = strlen(text);
    const char *digits = text + (text[0] == '-');
    const char *dot = strchr(digits, '.');
    // numeric holds up to 131072 digits before the point and 16383 after:
    // a longer text is no number's output (and numeric_in would refuse it).
    size_t before = dot != nullptr ? static_cast<size_t>(dot - digits) : strlen(digits);
    size_t after = dot != nullptr ? strlen(dot + 1) : 0;
    bool number = length > 0 && before <= 131072 && after <= 16383 &&
                  isdigit(static_cast<unsigned char>(digits[0])) &&
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
            values = lappend(values,
                             DatumGetPointer(DirectFunctionCall1(jsonb_in, CStringGetDatum(text))));
    }
    return values;
}

namespace {

// The object or array that jsonb prints as exactly `text`, or nullptr. The
// parse runs in a subtransaction: text that is not JSON, or that no jsonb
// can hold, prints no value.
Jsonb *container_printed_as(const char *text) {
    MemoryContext caller = CurrentMemoryContext;
    ResourceOwner owner = CurrentResourceOwner;
    Jsonb *parsed = nullptr;
    BeginInternalSubTransaction(nullptr);
    MemoryContextSwitchTo(caller);
    PG_TRY();
    {
        parsed = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(text)));
        ReleaseCurrentSubTransaction();
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(caller);
        ErrorData *error = CopyErrorData();
        FlushErrorState();
        RollbackAndReleaseCurrentSubTransaction();
        MemoryContextSwitchTo(caller);
        CurrentResourceOwner = owner;
        // Only what the text itself causes means "no such value"; a cancel
        // or running out of memory is the query's error.
        if (ERRCODE_TO_CATEGORY(error->sqlerrcode) != ERRCODE_DATA_EXCEPTION &&
            error->sqlerrcode != ERRCODE_STATEMENT_TOO_COMPLEX)
            ReThrowError(error);
        parsed = nullptr;
    }
    PG_END_TRY();
    MemoryContextSwitchTo(caller);
    CurrentResourceOwner = owner;
    if (parsed == nullptr || JB_ROOT_IS_SCALAR(parsed) ||
        strcmp(DatumGetCString(DirectFunctionCall1(jsonb_out, PointerGetDatum(parsed))), text) != 0)
        return nullptr;
    return parsed;
}

// The jsonb values whose ->> text is `printed`, objects and arrays included.
List *all_spellings(const char *printed) {
    List *values = tscoll::pg::jsonb_spellings(printed);
    if (printed[0] == '{' || printed[0] == '[')
        if (Jsonb *container = container_printed_as(printed))
            values = lappend(values, container);
    return values;
}

Datum jsonb_array(List *values) {
    Datum *items = static_cast<Datum *>(palloc(sizeof(Datum) * (list_length(values) + 1)));
    int n = 0;
    ListCell *lc;
    foreach (lc, values)
        items[n++] = PointerGetDatum(lfirst(lc));
    return PointerGetDatum(construct_array(items, n, JSONBOID, -1, false, TYPALIGN_INT));
}

}  // namespace

// tscoll._jsonb_spellings(text) RETURNS jsonb[]: the jsonb values whose ->>
// text is `printed`, for meta->'k' = ANY(...) in place of meta->>'k' =
// <parameter>.
TSCOLL_FUNCTION(tscoll_jsonb_spellings) {
    return tscoll::pg::pg_call(
        [&] { return jsonb_array(all_spellings(text_to_cstring(PG_GETARG_TEXT_PP(0)))); });
}

// tscoll._jsonb_spellings(text[]) RETURNS jsonb[]: the same for each
// element (NULLs match nothing), for meta->>'k' IN (...) and = ANY(...).
TSCOLL_FUNCTION(tscoll_jsonb_spellings_of_array) {
    return tscoll::pg::pg_call([&] {
        ArrayType *array = PG_GETARG_ARRAYTYPE_P(0);
        Datum *texts = nullptr;
        bool *nulls = nullptr;
        int count = 0;
        deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &texts, &nulls, &count);
        List *values = NIL;
        for (int i = 0; i < count; i++)
            if (!nulls[i])
                values = list_concat(values, all_spellings(TextDatumGetCString(texts[i])));
        return jsonb_array(values);
    });
}

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

// Beyond float8's range, the infinity or zero it rounds to: rounding keeps
// the order, so the bucket's range still holds its values, and a number
// float8 cannot hold (NULL in a float8 typed field) fails no query.
double as_float8(Numeric n) {
    return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, NumericGetDatum(n)));
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
