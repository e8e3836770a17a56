// Core dates (microseconds since 1970) <-> PostgreSQL timestamps
// (microseconds since 2000).
#pragma once

extern "C" {
#include "postgres.h"
#include "datatype/timestamp.h"
}

#include <optional>

#include "core/date.hpp"

namespace tscoll::pg {

constexpr int64 kUnixToPostgresMicros =
    int64{POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE} * SECS_PER_DAY * USECS_PER_SEC;

constexpr TimestampTz to_timestamptz(UnixMicros t) {
    return t - kUnixToPostgresMicros;
}
constexpr UnixMicros to_unix_micros(TimestampTz t) {
    return t + kUnixToPostgresMicros;
}
// A time field's value from a timestamptz, when tscoll can hold it.
constexpr std::optional<UnixMicros> time_field_value(TimestampTz t) {
    if (TIMESTAMP_NOT_FINITE(t) || t > kMaxTime - kUnixToPostgresMicros)
        return std::nullopt;
    return to_unix_micros(t);
}

}  // namespace tscoll::pg
