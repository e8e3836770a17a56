// Typed fields (doc/REFERENCE.md, Typed fields): a view column that reads a
// measurement field as one PostgreSQL type. A value of another JSON type,
// or one the type cannot hold, reads as NULL, never as an error: a
// schemaless field may hold anything, and a BI tool reading the column
// must not fail on one odd measurement.
#pragma once

extern "C" {
#include "postgres.h"
}

#include <optional>

#include "core/value.hpp"

namespace tscoll::pg {

// The type of a typed field's column, by the letter _unpack_fields takes
// for it (unpack_call.hpp); jsonb fields are doc->'f' itself.
enum class TypedField : char {
    Float8 = 'd',
    Int8 = 'l',
    Int4 = 'i',
    Text = 's',
    Bool = 'b',
    Timestamptz = 'z',
};

// The column's type for `kind`; InvalidOid when `kind` is no TypedField.
Oid typed_field_type(char kind);
// The TypedField whose column tscoll._as_<name> reads, by the function's
// name; nullopt for any other name.
std::optional<TypedField> typed_field_of_function(const char *name);

// The column's value for `v`; *null when v is of another type.
Datum typed_field_datum(const Value &v, TypedField kind, bool *null);

// A number's float8: its double when it has one, NULL beyond float8's range.
std::optional<double> typed_float8(const Value &v);

// A typed field column's value `d` of `type` as the measurement's field
// value, for INSERT; throws Error(BadValue) for a float8 JSON cannot hold
// (NaN, infinities).
Value typed_field_value(Datum d, Oid type);

// A typed field column's value of `type` for measurement field value `v`
// (nullptr: absent).
Datum typed_column_datum(const Value *v, Oid type, bool *null);

// Whether field value `given` reads, in a column of `type`, as the value
// `column` that the column was given (typed_field_value): then doc and the
// column agree, and doc's value, the more exact, is kept.
bool typed_values_agree(const Value &given, const Value &column, Oid type);

}  // namespace tscoll::pg
