// Dates as tscoll writes them: microseconds since 1970-01-01 UTC, rendered
// in the canonical text YYYY-MM-DDTHH:MM:SS.fffZ (six fractional digits when
// the microseconds are not a multiple of 1000), independent of any session
// setting. Years outside 0000..9999 use ISO 8601's expanded form (+/-YYYYYY).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tscoll {

using UnixMicros = int64_t;

// The times a collection's time field can hold: from PostgreSQL's first
// timestamptz (4714-11-24 00:00 BC) to the end of the year 200000, the last
// the date parser reads (microseconds since 1970 stay far from overflow).
constexpr UnixMicros kMinTime = -210866803200000000;
constexpr UnixMicros kMaxTime = 6249254803199999999;  // +200000-12-31T23:59:59.999999Z

std::string format_canonical_date(UnixMicros t);

// Parses exactly the canonical form (3 or 6 fractional digits, 'Z').
std::optional<UnixMicros> parse_canonical_date(std::string_view text);

// Parses an RFC 3339 / ISO 8601 date-time: YYYY-MM-DD, optionally followed
// by T (or a space) and HH:MM[:SS[.fraction]], optionally followed by Z or a
// UTC offset +HH[:MM]; no offset means UTC. Fractions beyond microseconds are
// rounded. Nothing else (no "now", no zone names, no session settings).
std::optional<UnixMicros> parse_iso_date(std::string_view text);

// floor(a / b) for b > 0, also for negative a (dates before 1970).
constexpr int64_t floor_div(int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && (a < 0));
}

}  // namespace tscoll
