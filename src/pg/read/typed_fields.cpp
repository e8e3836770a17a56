#include "pg/read/typed_fields.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
}

#include <charconv>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/measurement.hpp"
#include "core/number.hpp"
#include "pg/guard.hpp"
#include "pg/pg_time.hpp"
#include "pg/read/field_text.hpp"
#include "pg/types/jsonb_value.hpp"

namespace tscoll::pg {

namespace {

struct Kind {
    TypedField field;
    Oid type;
    const char *function;
};

constexpr Kind kKinds[] = {
    {TypedField::Float8, FLOAT8OID, "_as_float8"},
    {TypedField::Int8, INT8OID, "_as_int8"},
    {TypedField::Int4, INT4OID, "_as_int4"},
    {TypedField::Text, TEXTOID, "_as_text"},
    {TypedField::Bool, BOOLOID, "_as_bool"},
    {TypedField::Timestamptz, TIMESTAMPTZOID, "_as_timestamptz"},
};

}  // namespace

Oid typed_field_type(char kind) {
    for (const Kind &k : kKinds)
        if (static_cast<char>(k.field) == kind)
            return k.type;
    return InvalidOid;
}

std::optional<TypedField> typed_field_of_function(const char *name) {
    for (const Kind &k : kKinds)
        if (strcmp(k.function, name) == 0)
            return k.field;
    return std::nullopt;
}

std::optional<double> typed_float8(const Value &v) {
    if (!v.is(Value::Kind::Number))
        return std::nullopt;
    if (std::optional<double> d = plain_double(v.as_number()))
        return d;
    const std::string &text = v.as_number().text;
    double d = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(d))
        return std::nullopt;
    return d == 0 ? 0.0 : d;  // numeric has no -0, and doc->'f' is numeric
}

Datum typed_field_datum(const Value &v, TypedField kind, bool *null) {
    *null = false;
    switch (kind) {
        case TypedField::Float8:
            if (std::optional<double> d = typed_float8(v))
                return Float8GetDatum(*d);
            break;
        case TypedField::Int8:
        case TypedField::Int4:
            if (v.is(Value::Kind::Number)) {
                std::optional<int64_t> n = exact_int64(v.as_number().text);
                if (n && kind == TypedField::Int8)
                    return Int64GetDatum(*n);
                if (n && *n >= PG_INT32_MIN && *n <= PG_INT32_MAX)
                    return Int32GetDatum(static_cast<int32>(*n));
            }
            break;
        case TypedField::Text:
            // An ObjectId is a string in doc (a generated _id).
            if (v.is(Value::Kind::String) || v.is(Value::Kind::ObjectId)) {
                std::string s =
                    v.is(Value::Kind::String) ? v.as_string() : v.as_objectid().to_hex();
                return pg_call(
                    [&] { return PointerGetDatum(cstring_to_text_with_len(s.data(), s.size())); });
            }
            break;
        case TypedField::Bool:
            if (v.is(Value::Kind::Bool))
                return BoolGetDatum(v.as_bool());
            break;
        case TypedField::Timestamptz: {
            std::optional<UnixMicros> t;
            if (v.is(Value::Kind::Date))
                t = v.as_date();
            else
                t = extended_json_date(v);
            // Within the dates doc can show and read back alike.
            if (t && *t >= kMinTime && *t <= kMaxTime)
                return TimestampTzGetDatum(to_timestamptz(*t));
            break;
        }
    }
    *null = true;
    return 0;
}

Value typed_field_value(Datum d, Oid type) {
    switch (type) {
        case FLOAT8OID: {
            double x = DatumGetFloat8(d);
            if (!std::isfinite(x))
                throw Error(ErrorCode::BadValue,
                            "a measurement field cannot hold " +
                                std::string(std::isnan(x) ? "NaN" : "an infinite number"));
            return Value::real(x == 0 ? 0.0 : x);
        }
        case INT8OID:
            return Value::number(DatumGetInt64(d));
        case INT4OID:
            return Value::number(DatumGetInt32(d));
        case TEXTOID: {
            text *t = pg_call([&] { return DatumGetTextPP(d); });
            return Value::string(std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
        }
        case BOOLOID:
            return Value::boolean(DatumGetBool(d));
        case TIMESTAMPTZOID:
            if (TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(d)))
                throw Error(ErrorCode::BadValue,
                            "a measurement field cannot hold an infinite date");
            return Value::date(to_unix_micros(DatumGetTimestampTz(d)));
        case JSONBOID:
            return jsonb_to_value(pg_call([&] { return DatumGetJsonbP(d); }));
    }
    throw Error(ErrorCode::Internal, "a typed field column of an unknown type");
}

Datum typed_column_datum(const Value *v, Oid type, bool *null) {
    *null = v == nullptr;
    if (v == nullptr)
        return 0;
    if (type == JSONBOID)
        return PointerGetDatum(value_to_jsonb(*v));
    for (const Kind &k : kKinds)
        if (k.type == type)
            return typed_field_datum(*v, k.field, null);
    throw Error(ErrorCode::Internal, "a typed field column of an unknown type");
}

bool typed_values_agree(const Value &given, const Value &column, Oid type) {
    if (type == JSONBOID)
        return json_equal(given, column);
    bool given_null = false, column_null = false;
    Datum a = typed_column_datum(&given, type, &given_null);
    Datum b = typed_column_datum(&column, type, &column_null);
    if (given_null || column_null)
        return false;
    switch (type) {
        case FLOAT8OID:
            return DatumGetFloat8(a) == DatumGetFloat8(b);
        case TEXTOID:
            return pg_call([&] {
                text *x = DatumGetTextPP(a), *y = DatumGetTextPP(b);
                return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
                       memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
            });
        default:  // int8, int4, bool, timestamptz: by value
            return a == b;
    }
}

}  // namespace tscoll::pg

using tscoll::pg::TypedField;

namespace {

Datum typed_field_of_jsonb(FunctionCallInfo fcinfo, TypedField kind) {
    Jsonb *value = PG_GETARG_JSONB_P(0);
    bool null = false;
    Datum result = tscoll::pg::typed_field_datum(tscoll::pg::jsonb_to_value(value), kind, &null);
    if (null)
        PG_RETURN_NULL();
    return result;
}

}  // namespace

// tscoll._as_<type>(value jsonb) RETURNS <type>: a typed field's column,
// the view's definition of it (doc->'f' in, NULL for another type).
TSCOLL_FUNCTION(tscoll_as_float8) {
    return typed_field_of_jsonb(fcinfo, TypedField::Float8);
}
TSCOLL_FUNCTION(tscoll_as_int8) {
    return typed_field_of_jsonb(fcinfo, TypedField::Int8);
}
TSCOLL_FUNCTION(tscoll_as_int4) {
    return typed_field_of_jsonb(fcinfo, TypedField::Int4);
}
TSCOLL_FUNCTION(tscoll_as_text) {
    return typed_field_of_jsonb(fcinfo, TypedField::Text);
}
TSCOLL_FUNCTION(tscoll_as_bool) {
    return typed_field_of_jsonb(fcinfo, TypedField::Bool);
}
TSCOLL_FUNCTION(tscoll_as_timestamptz) {
    return typed_field_of_jsonb(fcinfo, TypedField::Timestamptz);
}
