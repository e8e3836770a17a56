// SQL function behind tscoll.create_index(): the key translation of
// doc/REFERENCE.md §2.4 (tscoll.create_index).
extern "C" {
#include "postgres.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
}

#include "core/error.hpp"
#include "core/index_spec.hpp"
#include "pg/guard.hpp"
#include "pg/types/jsonb_value.hpp"

using tscoll::Value;

// tscoll._translate_index(keys jsonb, options jsonb, time_field text,
// meta_field text) RETURNS jsonb. keys: [[key, direction], ...] in the
// user's order.
TSCOLL_FUNCTION(tscoll_translate_index) {
    if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
        throw tscoll::Error(tscoll::ErrorCode::BadValue, "invalid time-series index: no keys");
    // Arguments are fetched (detoasted) before any C++ object lives.
    Jsonb *pairs_arg = PG_GETARG_JSONB_P(0);
    Jsonb *options_arg = PG_ARGISNULL(1) ? nullptr : PG_GETARG_JSONB_P(1);
    char *time_arg = text_to_cstring(PG_GETARG_TEXT_PP(2));
    char *meta_arg = PG_ARGISNULL(3) ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(3));
    Value pairs = tscoll::pg::jsonb_to_value(pairs_arg);
    Value options = options_arg ? tscoll::pg::jsonb_to_value(options_arg) : Value::object();
    std::string time_field = time_arg;
    std::optional<std::string> meta_field;
    if (meta_arg != nullptr)
        meta_field = meta_arg;
    auto is_pair = [](const Value &p) {
        return p.is(Value::Kind::Array) && p.as_array().size() == 2 &&
               p.as_array()[0].is(Value::Kind::String);
    };
    if (!pairs.is(Value::Kind::Array))
        throw tscoll::Error(tscoll::ErrorCode::BadValue, "invalid time-series index: no keys");
    std::vector<tscoll::IndexKey> keys;
    for (const Value &pair : pairs.as_array()) {
        if (!is_pair(pair))
            throw tscoll::Error(tscoll::ErrorCode::BadValue,
                                "invalid time-series index: keys must be [key, direction] pairs");
        keys.push_back({pair.as_array()[0].as_string(), pair.as_array()[1]});
    }
    tscoll::IndexDefinition def = tscoll::translate_index(keys, options, time_field, meta_field);
    Value result = Value::object();
    result.add("name", Value::string(def.name));
    Value columns = Value::array();
    for (const std::string &c : def.columns)
        columns.as_array().push_back(Value::string(c));
    result.add("columns", std::move(columns));
    result.add("predicate", def.predicate ? Value::string(*def.predicate) : Value::null());
    result.add("hidden", Value::boolean(def.hidden));
    result.add("options", def.options);
    PG_RETURN_JSONB_P(tscoll::pg::value_to_jsonb(result));
}
