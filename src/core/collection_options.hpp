// The options of a time-series collection and MongoDB's rules for them
// (doc/REFERENCE.md, tscoll.create_collection): granularities, fixed
// bucketing, field names, expiry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/value.hpp"

namespace tscoll {

enum class Granularity { Seconds, Minutes, Hours };

struct BucketingDefaults {
    int32_t max_span_seconds;
    int32_t rounding_seconds;
};

const char *granularity_name(Granularity g);
std::optional<Granularity> granularity_from_name(std::string_view name);
BucketingDefaults bucketing_defaults(Granularity g);

constexpr int32_t kMaxBucketSpanSeconds = 31536000;  // one year
constexpr int64_t kExpireAfterSecondsLimit = int64_t{1} << 62;

struct CollectionOptions {
    std::string time_field;
    std::optional<std::string> meta_field;
    std::optional<Granularity> granularity;  // nullopt: fixed bucketing
    int32_t bucket_max_span_seconds = 0;
    int32_t bucket_rounding_seconds = 0;  // always filled in
    std::optional<int64_t> expire_after_seconds;

    bool operator==(const CollectionOptions &o) const;
};

// Validates MongoDB create-command options,
//   {"timeseries": {"timeField": .., "metaField": .., "granularity": ..,
//                   "bucketMaxSpanSeconds": .., "bucketRoundingSeconds": ..},
//    "expireAfterSeconds": ..}
// and fills in the bucketing defaults. The first broken rule throws
// Error(InvalidOptions | BadValue | TypeMismatch) naming the option.
CollectionOptions parse_create_options(const Value &options);

// The options as one flat object, every key present (null when unset):
// timeField, metaField, granularity, bucketMaxSpanSeconds,
// bucketRoundingSeconds, expireAfterSeconds.
Value to_flat_value(const CollectionOptions &options);

// The inverse of to_flat_value (the options as stored).
CollectionOptions from_flat_value(const Value &flat);

// What a collMod does (doc/REFERENCE.md, tscoll.coll_mod).
struct CollMod {
    CollectionOptions options;       // after the change
    bool bucketing_changed = false;  // span, rounding or granularity changed
    std::optional<Value> index;      // a validated "index" change, for the glue
};

// Applies MongoDB collMod changes,
//   {"timeseries": {"granularity" | "bucketMaxSpanSeconds" + "bucketRoundingSeconds"}}
//   {"expireAfterSeconds": n | "off"}
//   {"index": {"name" | "keyPattern": ..., "hidden": bool}}
// to a collection's options. Granularity and span only grow; existing
// buckets are not touched. Throws Error(InvalidOptions | BadValue |
// TypeMismatch) naming what is wrong.
CollMod apply_coll_mod(const CollectionOptions &current, const Value &changes);

}  // namespace tscoll
