// JSON text read straight into a Value, as PostgreSQL's jsonb holds it:
// object keys in jsonb's order (shorter first, then bytewise), a repeated
// key keeping its last value, numbers with numeric's text. For bulk loads,
// whose documents would otherwise be parsed into jsonb and then walked.
// What it does not read exactly as jsonb would (\u escapes, exponents,
// minus zero, nesting deeper than 100, anything invalid) it leaves to
// PostgreSQL's own parser, which also words the errors.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "core/value.hpp"

namespace tscoll {

std::optional<Value> read_plain_json(std::string_view text);

// A member of the top-level object that the reader may leave unread: the
// rows of a COPY mostly repeat their series' meta byte for byte, and a
// text read once need not be read again. The reader finds where the
// member's value ends without building it, and skips it when `seen` says
// its text was read before (so is plain JSON).
struct SkippableMember {
    SkippableMember(std::string_view key, std::function<bool(std::string_view)> seen)
        : key(key), seen(std::move(seen)) {}
    std::string_view key;
    std::function<bool(std::string_view)> seen;
    // Out: the value's text, when the key is there (once).
    std::optional<std::string_view> text;
    bool skipped = false;   // out: not read; the result lacks the member
    bool repeated = false;  // out: the key is there twice; nothing returned
};

// As above; a document whose `skip->key` is there twice is not read
// (nullopt, `skip->repeated`): read it without skipping.
std::optional<Value> read_plain_json(std::string_view text, SkippableMember *skip);

}  // namespace tscoll
