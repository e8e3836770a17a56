// One bucket as the insert path builds it (SPEC §4.1): its measurements,
// control.min/max, schema, and the rollover decision for the next
// measurement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/date.hpp"
#include "core/objectid.hpp"
#include "core/summary.hpp"
#include "core/value.hpp"

namespace tscoll {

struct BucketingLimits {
    int64_t max_span_seconds = 3600;
    int64_t rounding_seconds = 60;
    int64_t max_count = 1000;
    int64_t max_size = 128000;
    int64_t min_count = 10;
    // A bucket under min_count measurements grows up to this size.
    static constexpr int64_t kLargeMeasurementsMaxSize = 12 * 1024 * 1024;
};

// Why a bucket cannot take a measurement, in the order MongoDB checks.
enum class Rollover { None, TimeForward, TimeBackward, Count, Size, SchemaChange };

// The start of the bucket a measurement at `t` opens: t rounded down to
// the rounding, also before 1970.
UnixMicros bucket_start(UnixMicros t, int64_t rounding_seconds);

// A measurement ready for a bucket: its fields without the meta field (the
// time field as a Date, _id filled in) and its BSON size.
struct Measurement {
    UnixMicros time;
    Value fields;
    uint64_t bson_size;
};

class Bucket {
  public:
    // A new, empty bucket starting at `min_time`.
    Bucket(ObjectId id, UnixMicros min_time, std::string time_field);
    // A bucket read back from its stored data.
    Bucket(ObjectId id, UnixMicros min_time, std::string time_field, BucketData data);

    const ObjectId &id() const { return id_; }
    UnixMicros min_time() const { return min_time_; }
    const BucketData &data() const { return data_; }
    uint32_t count() const { return data_.count(); }

    struct Decision {
        Rollover reason;
        bool kept_open_for_large_measurements;  // rule 4's exception applied
    };
    Decision decide(const Measurement &m, const BucketingLimits &limits) const;
    void append(const Measurement &m);
    // Closed by size: never reopened (SPEC §4.1).
    void mark_full() { data_.mark_full(); }
    bool full() const { return data_.full(); }
    // Records that rule 4's exception applied; true the first time only.
    bool keep_open_for_large_measurements();

    // {"version": 1, "min": {...}, "max": {...}, "count": n}
    Value control() const;

  private:
    void summarise(const Value &fields);

    ObjectId id_;
    UnixMicros min_time_;
    std::string time_field_;
    BucketData data_;
    Value min_ = Value::object();
    Value max_ = Value::object();
    Schema schema_;
    bool kept_open_for_large_ = false;
};

// A tail (doc/ARCHITECTURE.md, "Tails"): measurements that a later
// statement appended to a stored bucket, kept in a bucket-table row of their
// own until they are folded into the bucket, so that an append writes what
// it appends and not the whole bucket. `seq` orders a bucket's tails as
// they were appended (1, 2, ...).
struct TailRef {
    ObjectId bucket;
    int64_t seq;
};

// A tail row's control: {"version": 2, "min": {<time>: the bucket's start},
// "max": {<time>: the tail's latest time}, "count": n, "tail": {"bucket":
// "<hex>", "seq": n}}. The bucket's start as min keeps the row within its
// bucket's time range, for pruning and the time merge; the fields are not
// summarised, so pruning by them keeps the row.
Value tail_control(const std::string &time_field, UnixMicros bucket_start, UnixMicros latest,
                   uint32_t count, const TailRef &ref);
// The tail a control belongs to; nullopt for a bucket's own control.
std::optional<TailRef> tail_ref(const Value &control);

// The bucket `data` stored under (id, min_time) without the measurements
// at `positions` (0-based, any order): control recomputed from the rest,
// control.min.<time> kept at the bucket's start (SPEC §6). Throws
// Error(BadValue) when no measurement would be left: an empty bucket is
// deleted, never written.
Bucket without_measurements(const ObjectId &id, UnixMicros min_time, const std::string &time_field,
                            const BucketData &data, std::vector<uint32_t> positions);

// Checks a bucket row written directly to the bucket table (SPEC §4.3):
// control is {"version": 1, ...} with a count, if any, that matches the
// data, the data holds at least one measurement, and every measurement has
// a date in the time field within [min_time, max_time]. The time checks are
// skipped when time_field is empty (the collection is not known yet, as
// during a restore). Throws Error(BadValue).
void check_bucket_row(const BucketData &data, const Value &control, const std::string &time_field,
                      UnixMicros min_time, UnixMicros max_time);

}  // namespace tscoll
