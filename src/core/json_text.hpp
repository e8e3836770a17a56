// JSON text read straight into a Value, as PostgreSQL's jsonb holds it:
// object keys in jsonb's order (shorter first, then bytewise), a repeated
// key keeping its last value, numbers with numeric's text. For bulk loads,
// whose documents would otherwise be parsed into jsonb and then walked.
// What it does not read exactly as jsonb would (\u escapes, exponents,
// minus zero, nesting deeper than 100, anything invalid) it leaves to
// PostgreSQL's own parser, which also words the errors.
#pragma once

#include <optional>
#include <string_view>

#include "core/value.hpp"

namespace tscoll {

std::optional<Value> read_plain_json(std::string_view text);

}  // namespace tscoll
