// The options of a time-series collection and MongoDB's rules for them
// (doc/REFERENCE.md, tscoll.create_collection): granularities, fixed
// bucketing, field names, expiry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A typed field (doc/REFERENCE.md, Typed fields): a view column that
// reads one measurement field as a PostgreSQL type.
struct TypedField {
    std::string name;
    std::string type;  // one of kTypedFieldTypes

    bool operator==(const TypedField &o) const { return name == o.name && type == o.type; }
};

// The types a typed field can have, by their PostgreSQL names.
constexpr const char *kTypedFieldTypes[] = {"float8", "int8",        "int4", "text",
                                            "bool",   "timestamptz", "jsonb"};

// A type name as PostgreSQL spells it (float8, double precision, bigint,
// ...) as one of kTypedFieldTypes; nullopt when it is none of them.
std::optional<std::string> typed_field_type(std::string_view name);

struct CollectionOptions {
    std::string time_field;
    std::optional<std::string> meta_field;
    std::optional<Granularity> granularity;  // nullopt: fixed bucketing
    int32_t bucket_max_span_seconds = 0;
    int32_t bucket_rounding_seconds = 0;  // always filled in
    std::optional<int64_t> expire_after_seconds;
    std::vector<TypedField> fields;  // in the order given (jsonb keeps its keys sorted)

    bool operator==(const CollectionOptions &o) const;
};

// Validates MongoDB create-command options,
//   {"timeseries": {"timeField": .., "metaField": .., "granularity": ..,
//                   "bucketMaxSpanSeconds": .., "bucketRoundingSeconds": ..},
//    "expireAfterSeconds": .., "fields": {"<name>": "<type>", ...}}
// and fills in the bucketing defaults. The first broken rule throws
// Error(InvalidOptions | BadValue | TypeMismatch) naming the option.
CollectionOptions parse_create_options(const Value &options);

// The options as one flat object, every key present (null when unset):
// timeField, metaField, granularity, bucketMaxSpanSeconds,
// bucketRoundingSeconds, expireAfterSeconds, fields ({} when none).
Value to_flat_value(const CollectionOptions &options);

// The inverse of to_flat_value (the options as stored).
CollectionOptions from_flat_value(const Value &flat);

// What a collMod does (doc/REFERENCE.md, tscoll.coll_mod).
struct CollMod {
    CollectionOptions options;             // after the change
    bool bucketing_changed = false;        // span, rounding or granularity changed
    std::optional<Value> index;            // a validated "index" change, for the glue
    std::vector<TypedField> added_fields;  // new typed fields, appended to options.fields
};

// Applies MongoDB collMod changes,
//   {"timeseries": {"granularity" | "bucketMaxSpanSeconds" + "bucketRoundingSeconds"}}
//   {"expireAfterSeconds": n | "off"}
//   {"index": {"name" | "keyPattern": ..., "hidden": bool}}
//   {"fields": {"<name>": "<type>", ...}} (new typed fields; a field's type
//   never changes)
// to a collection's options. Granularity and span only grow; existing
// buckets are not touched. Throws Error(InvalidOptions | BadValue |
// TypeMismatch) naming what is wrong.
CollMod apply_coll_mod(const CollectionOptions &current, const Value &changes);

}  // namespace tscoll
