// MongoDB index specifications on a time-series collection, translated to
// indexes of its bucket table (doc/REFERENCE.md, tscoll.create_index;
// MongoDB's timeseries_index_schema_conversion_functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/value.hpp"

namespace tscoll {

struct IndexKey {
    std::string field;  // as given: "<time>", "<meta>", "<meta>.a.b", "<field>"
    Value direction;    // 1 or -1 (other values are refused)
};

struct IndexDefinition {
    std::string name;                      // as given, or MongoDB's default name
    std::vector<std::string> columns;      // bucket-table key expressions, with direction
    std::optional<std::string> predicate;  // partial-index predicate on the bucket table
    bool hidden = false;
    std::optional<int64_t> expire_after_seconds;
    Value options = Value::object();  // as listed: the given options but name
};

// Translates keys (in the given order) and options {name, hidden,
// partialFilterExpression, expireAfterSeconds}. Unsupported kinds (unique,
// text, 2d, 2dsphere, hashed, wildcard) throw Error(Unsupported); other bad
// specifications throw Error(BadValue | InvalidOptions | TypeMismatch).
IndexDefinition translate_index(const std::vector<IndexKey> &keys, const Value &options,
                                const std::string &time_field,
                                const std::optional<std::string> &meta_field);

// A SQL string literal: quotes doubled (standard_conforming_strings).
std::string sql_literal(const std::string &text);

}  // namespace tscoll
