// From what a user inserts to a measurement ready for a bucket
// (doc/REFERENCE.md §3.2, INSERT): the doc and the view's time and meta
// columns reconciled, the time field read as a date, {"$date": ...} values
// recognised, _id filled in, limits checked, and the series the measurement
// belongs to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/bucket.hpp"
#include "core/value.hpp"

namespace tscoll {

struct CollectionFields {
    std::string collection;  // for messages
    std::string time_field;
    std::string meta_field;        // empty when the collection has none
    int64_t rounding_seconds = 1;  // where a new bucket would start (doc/REFERENCE.md, Bucketing)
};

// One row as it reaches the view: any of the three columns may be absent.
struct MeasurementInput {
    std::optional<Value> doc;
    std::optional<UnixMicros> time;
    std::optional<Value> meta;
};

struct PreparedMeasurement {
    Measurement measurement;
    std::optional<Value> meta;  // nullopt: the meta field is absent
    size_t meta_spelling = 0;   // spelling_hash(*meta): a writer's first test of its series
};

constexpr size_t kMaxNestingDepth = 100;

// What preparing a measurement needs of its meta value: a COPY's parser
// that has read a meta once prepares the rows repeating it from this
// alone (write/copy_parse).
struct KnownMeta {
    uint64_t bson_size = 0;
    size_t nesting_depth = 0;
    size_t spelling = 0;  // spelling_hash
};

KnownMeta known_meta(const Value &meta);

// `known`: the doc's meta field, left out of `input.doc` (a series' meta
// given again), with what preparing needs of it; `input` then has no meta.
PreparedMeasurement prepare_measurement(MeasurementInput input, const CollectionFields &fields,
                                        uint64_t max_measurement_size, const ObjectId &generated_id,
                                        const KnownMeta *known = nullptr);

// A measurement's fields as the view's doc shows them: the time field as
// canonical text (other dates stay dates), the meta field, when the series
// has one, last.
Value view_document(Value fields, const std::string &time_field, const std::string &meta_field,
                    const std::optional<Value> &meta);

// SQLSTATE 22007: the time field is missing or not a date.
[[noreturn]] void throw_bad_date(const CollectionFields &fields);

// A date written in MongoDB Extended JSON ({"$date": "<iso>"} or
// {"$date": {"$numberLong": "<ms>"}}), or nullopt.
std::optional<UnixMicros> extended_json_date(const Value &v);

// Equality of JSON values as jsonb sees it: object key order ignored,
// numbers by value.
bool json_equal(const Value &a, const Value &b);

// A byte string equal for two meta values exactly when they are the same
// series: keys sorted recursively, numbers normalised, absent != null.
std::string series_key(const std::optional<Value> &meta);

}  // namespace tscoll
