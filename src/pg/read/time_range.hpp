// The measurements a query's time conditions keep, as _unpack_fields and
// _unpack_groups take them: a lower and an upper bound, each absent,
// inclusive or strict (plan/read_plan.cpp moves the conditions into the call).
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "utils/timestamp.h"
}

#include <optional>
#include <string>

#include "core/bucket_data.hpp"
#include "pg/pg_time.hpp"

namespace tscoll::pg {

struct TimeRange {
    std::optional<TimestampTz> lower, upper;
    bool lower_strict = false, upper_strict = false;

    bool contains(TimestampTz t) const {
        return (!lower || (lower_strict ? t > *lower : t >= *lower)) &&
               (!upper || (upper_strict ? t < *upper : t <= *upper));
    }
    bool bounded() const { return lower || upper; }
};

// Arguments first .. first + 3: (lower, lower_strict, upper, upper_strict);
// a bound whose strictness is NULL is absent. nullopt when a present bound
// is NULL: then no measurement matches, as `time >= NULL` matches none.
inline std::optional<TimeRange> time_range_arg(FunctionCallInfo fcinfo, int first) {
    TimeRange range;
    for (int i : {first, first + 2}) {
        if (PG_ARGISNULL(i + 1))
            continue;
        if (PG_ARGISNULL(i))
            return std::nullopt;
        (i == first ? range.lower : range.upper) = PG_GETARG_TIMESTAMPTZ(i);
        (i == first ? range.lower_strict : range.upper_strict) = PG_GETARG_BOOL(i + 1);
    }
    return range;
}

// The window in which a decode builds measurements; none when unbounded.
inline std::optional<BucketData::TimeWindow> decode_window(const TimeRange &range,
                                                           const std::string &time_field) {
    if (!range.bounded())
        return std::nullopt;
    return BucketData::TimeWindow{
        time_field, [range](UnixMicros t) { return range.contains(to_timestamptz(t)); }};
}

}  // namespace tscoll::pg
