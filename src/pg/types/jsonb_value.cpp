#include "pg/types/jsonb_value.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
}

#include <vector>

#include "core/error.hpp"
#include "pg/guard.hpp"

namespace tscoll::pg {

namespace {

Value scalar_to_value(const JsonbValue &v) {
    switch (v.type) {
        case jbvNull:
            return Value::null();
        case jbvBool:
            return Value::boolean(v.val.boolean);
        case jbvString:
            return Value::string(std::string(v.val.string.val, v.val.string.len));
        case jbvNumeric: {
            const char *text = pg_call([&] {
                return DatumGetCString(
                    DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
            });
            return Value::number(text);
        }
        default:
            throw Error(ErrorCode::Internal, "unexpected jsonb scalar type");
    }
}

// Adds `v` to the innermost open container, or makes it the result.
void attach(std::vector<Value> &open, std::vector<std::string> &keys, Value &result, Value v) {
    if (open.empty()) {
        result = std::move(v);
    } else if (open.back().is(Value::Kind::Array)) {
        open.back().as_array().push_back(std::move(v));
    } else {
        open.back().add(std::move(keys.back()), std::move(v));
        keys.pop_back();
    }
}

// A string jsonb holds on to until the value is finished: palloc'd.
JsonbValue palloc_string_value(const std::string &s) {
    JsonbValue v;
    v.type = jbvString;
    v.val.string.val = pg_call([&] { return pnstrdup(s.data(), s.size()); });
    v.val.string.len = static_cast<int>(s.size());
    return v;
}

// What numeric_in makes of `text`. Plain decimals of up to 18 digits, as
// measurements mostly hold, are built from their digits and scale, which
// gives numeric_in's value and display scale without its parse.
Numeric numeric_of(const std::string &text) {
    int64 digits = 0;
    int count = 0;
    int scale = -1;  // digits after the point; -1 before one
    bool plain = !text.empty();
    for (size_t i = text[0] == '-' ? 1 : 0; plain && i < text.size(); i++) {
        char c = text[i];
        if (c == '.' && scale < 0) {
            scale = 0;
        } else if (c >= '0' && c <= '9' && ++count <= 18) {
            digits = digits * 10 + (c - '0');
            scale += scale >= 0;
        } else {
            plain = false;
        }
    }
    if (plain && count > 0 && scale != 0) {
        int64 signed_digits = text[0] == '-' ? -digits : digits;
        return pg_call([&] {
            return scale < 0 ? int64_to_numeric(signed_digits)
                             : int64_div_fast_to_numeric(signed_digits, scale);
        });
    }
    return pg_call([&] {
        return DatumGetNumeric(DirectFunctionCall3(numeric_in, CStringGetDatum(text.c_str()),
                                                   ObjectIdGetDatum(InvalidOid),
                                                   Int32GetDatum(-1)));
    });
}

JsonbValue scalar_to_jsonb(const Value &value) {
    JsonbValue v;
    switch (value.kind()) {
        case Value::Kind::Null:
            v.type = jbvNull;
            break;
        case Value::Kind::Bool:
            v.type = jbvBool;
            v.val.boolean = value.as_bool();
            break;
        case Value::Kind::String:
            return string_value(value.as_string());
        case Value::Kind::Number:
            v.type = jbvNumeric;
            v.val.numeric = numeric_of(value.as_number().text);
            break;
        default:
            throw Error(ErrorCode::Internal, "not a scalar");
    }
    return v;
}

JsonbValue *push(JsonbParseState **state, JsonbIteratorToken token, const JsonbValue *v) {
    // pushJsonbValue only reads v; its signature predates const.
    return pg_call([&] { return pushJsonbValue(state, token, const_cast<JsonbValue *>(v)); });
}

// Pushes `value`; returns what pushJsonbValue returned for its last token,
// which for the outermost container is the finished value.
JsonbValue *push_value(JsonbParseState **state, const Value &value,
                       JsonbIteratorToken scalar_token) {
    switch (value.kind()) {
        case Value::Kind::Array:
            push(state, WJB_BEGIN_ARRAY, nullptr);
            for (const Value &element : value.as_array())
                push_value(state, element, WJB_ELEM);
            return push(state, WJB_END_ARRAY, nullptr);
        case Value::Kind::Object:
            push(state, WJB_BEGIN_OBJECT, nullptr);
            for (const Member &m : value.as_object()) {
                JsonbValue key = string_value(m.key);
                push(state, WJB_KEY, &key);
                push_value(state, m.value, WJB_VALUE);
            }
            return push(state, WJB_END_OBJECT, nullptr);
        case Value::Kind::Date: {
            // Any date but the time field stays a date when read back.
            push(state, WJB_BEGIN_OBJECT, nullptr);
            static const std::string date_key = "$date";
            JsonbValue key = string_value(date_key);
            push(state, WJB_KEY, &key);
            JsonbValue scalar = palloc_string_value(format_canonical_date(value.as_date()));
            push(state, WJB_VALUE, &scalar);
            return push(state, WJB_END_OBJECT, nullptr);
        }
        case Value::Kind::ObjectId: {
            JsonbValue scalar = palloc_string_value(value.as_objectid().to_hex());
            return push(state, scalar_token, &scalar);
        }
        default: {
            JsonbValue scalar = scalar_to_jsonb(value);
            return push(state, scalar_token, &scalar);
        }
    }
}

}  // namespace

JsonbValue string_value(const std::string &s) {
    JsonbValue v;
    v.type = jbvString;
    v.val.string.val = const_cast<char *>(s.data());
    v.val.string.len = static_cast<int>(s.size());
    return v;
}

JsonbValue jsonb_value_of(const Value &value) {
    switch (value.kind()) {
        case Value::Kind::Null:
        case Value::Kind::Bool:
        case Value::Kind::String:
        case Value::Kind::Number:
            return scalar_to_jsonb(value);
        case Value::Kind::ObjectId:
            return palloc_string_value(value.as_objectid().to_hex());
        default: {  // containers, and dates as {"$date": ...}
            JsonbParseState *state = nullptr;
            return *push_value(&state, value, WJB_ELEM);
        }
    }
}

Value jsonb_to_value(Jsonb *jsonb) {
    JsonbIterator *it = pg_call([&] { return JsonbIteratorInit(&jsonb->root); });
    std::vector<Value> open;
    std::vector<std::string> keys;
    Value result;
    bool raw_scalar = false;
    JsonbValue v;
    JsonbIteratorToken token;
    while ((token = pg_call([&] { return JsonbIteratorNext(&it, &v, false); })) != WJB_DONE) {
        switch (token) {
            case WJB_BEGIN_ARRAY:
                // A top-level scalar is stored as a one-element "raw scalar" array.
                if (v.val.array.rawScalar) {
                    raw_scalar = true;
                } else {
                    open.push_back(Value::array());
                    open.back().as_array().reserve(v.val.array.nElems);
                }
                break;
            case WJB_BEGIN_OBJECT:
                open.push_back(Value::object());
                // One more at the top, for an _id the insert path may add.
                open.back().as_object().reserve(v.val.object.nPairs + (open.size() == 1));
                break;
            case WJB_KEY:
                keys.emplace_back(v.val.string.val, v.val.string.len);
                break;
            case WJB_VALUE:
            case WJB_ELEM:
                attach(open, keys, result, scalar_to_value(v));
                break;
            case WJB_END_ARRAY:
                if (raw_scalar)
                    break;
                [[fallthrough]];
            case WJB_END_OBJECT: {
                Value done = std::move(open.back());
                open.pop_back();
                attach(open, keys, result, std::move(done));
                break;
            }
            default:
                break;
        }
    }
    return result;
}

Jsonb *value_to_jsonb(const Value &value) {
    JsonbParseState *state = nullptr;
    JsonbValue *root;
    if (value.is(Value::Kind::Array) || value.is(Value::Kind::Object) ||
        value.is(Value::Kind::Date)) {
        root = push_value(&state, value, WJB_ELEM);
    } else {
        // jsonb stores a top-level scalar as a raw-scalar array.
        JsonbValue array;
        array.type = jbvArray;
        array.val.array.rawScalar = true;
        array.val.array.nElems = 1;
        push(&state, WJB_BEGIN_ARRAY, &array);
        push_value(&state, value, WJB_ELEM);
        root = push(&state, WJB_END_ARRAY, nullptr);
    }
    return pg_call([&] { return JsonbValueToJsonb(root); });
}

}  // namespace tscoll::pg
