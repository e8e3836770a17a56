#include "pg/read/field_text.hpp"

extern "C" {
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
}

#include <charconv>
#include <cmath>

#include "core/error.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"

namespace tscoll::pg {

std::string text_arg(FunctionCallInfo fcinfo, int n) {
    text *t = pg_call([&] { return PG_GETARG_TEXT_PP(n); });
    return std::string(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

std::vector<std::string> text_array_arg(FunctionCallInfo fcinfo, int n) {
    ArrayType *array = pg_call([&] { return PG_GETARG_ARRAYTYPE_P(n); });
    Datum *elements = nullptr;
    bool *nulls = nullptr;
    int count = 0;
    pg_call([&] { deconstruct_array(array, TEXTOID, -1, false, 'i', &elements, &nulls, &count); });
    std::vector<std::string> result;
    for (int i = 0; i < count; i++) {
        if (nulls[i])
            throw Error(ErrorCode::BadValue, "field names must not be null");
        text *t = pg_call([&] { return DatumGetTextPP(elements[i]); });
        result.emplace_back(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
    }
    return result;
}

std::string field_text(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::String:
            return v.as_string();
        case Value::Kind::Bool:
            return v.as_bool() ? "true" : "false";
        case Value::Kind::ObjectId:
            return v.as_objectid().to_hex();
        case Value::Kind::Number: {
            // jsonb prints numbers as numeric does: no exponent, no "-0".
            const std::string &text = v.as_number().text;
            if (exponent_mark(text) == std::string::npos && text.rfind("-0", 0) != 0)
                return text;
            return pg_call([&] {
                return DatumGetCString(DirectFunctionCall1(
                    numeric_out,
                    DirectFunctionCall3(numeric_in, CStringGetDatum(text.c_str()),
                                        ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1))));
            });
        }
        default: {
            Jsonb *jsonb = value_to_jsonb(v);
            return pg_call([&] { return JsonbToCString(nullptr, &jsonb->root, VARSIZE(jsonb)); });
        }
    }
}

std::optional<double> plain_double(const Number &n) {
    if (std::optional<double> d = n.float8())
        return d;
    const std::string &text = n.text;
    if (exponent_mark(text) != std::string::npos || text.rfind("-0", 0) == 0)
        return std::nullopt;
    double d = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(d))
        return std::nullopt;
    return d;
}

std::optional<double> field_float8(const Value &v) {
    if (v.is(Value::Kind::Null))
        return std::nullopt;
    if (v.is(Value::Kind::Number))
        if (std::optional<double> d = plain_double(v.as_number()))
            return d;
    std::string text = field_text(v);
    return pg_call([&] {
        return DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(text.c_str())));
    });
}

}  // namespace tscoll::pg
