// One bucket as the insert path builds it (doc/REFERENCE.md, Bucketing):
// its measurements, control.min/max, schema, and the rollover decision for
// the next measurement.
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
    // The insert (a statement) that brought it, numbered by the writer: a
    // bucket counts a commit per insert it took measurements of, as
    // MongoDB counts one per insert command, however the inserts' writes
    // were gathered.
    uint64_t statement = 0;
};

// What the rollover rules read of a bucket (doc/REFERENCE.md, Bucketing):
// its start, count, data size, schema and whether it is full, without its
// measurements, so that a stored bucket takes an append without being
// decoded each time.
class BucketState {
  public:
    explicit BucketState(UnixMicros min_time) : min_time_(min_time) {}

    UnixMicros min_time() const { return min_time_; }
    uint32_t count() const { return count_; }
    uint64_t size() const { return size_; }  // sum of BSON sizes (rule 4)
    // Closed by size: never reopened (doc/REFERENCE.md, Bucketing).
    bool full() const { return full_; }
    void mark_full() { full_ = true; }

    struct Decision {
        Rollover reason;
        bool kept_open_for_large_measurements;  // rule 4's exception applied
        // The measurement names only fields the schema has (Schema::Fit):
        // adding it leaves the schema as it is.
        bool schema_known = false;
    };
    Decision decide(const Measurement &m, const BucketingLimits &limits) const;
    // `schema_known` as decide() found it.
    void add(const Value &fields, uint64_t bson_size, bool schema_known = false);
    // Adds every measurement of `data`.
    void add(const BucketData &data);
    // The same, from stored data's outline.
    void add(const BucketOutline &outline);
    // Counts measurements that add nothing to the schema (their fields
    // are all known), without reading them.
    void add_counted(uint32_t count, uint64_t size) {
        count_ += count;
        size_ += size;
    }
    uint64_t schema_fingerprint() const { return schema_.fingerprint(); }

  private:
    UnixMicros min_time_;
    uint32_t count_ = 0;
    uint64_t size_ = 0;
    Schema schema_;
    bool full_ = false;
};

class Bucket {
  public:
    // A new, empty bucket starting at `min_time`.
    Bucket(ObjectId id, UnixMicros min_time, std::string time_field);
    // A bucket read back from its stored data.
    Bucket(ObjectId id, UnixMicros min_time, std::string time_field, BucketData data);

    const ObjectId &id() const { return id_; }
    UnixMicros min_time() const { return state_.min_time(); }
    // The measurements held as values: all of them until pack().
    const BucketData &data() const { return data_; }
    const BucketState &state() const { return state_; }
    uint32_t count() const { return state_.count(); }

    using Decision = BucketState::Decision;
    Decision decide(const Measurement &m, const BucketingLimits &limits) const {
        return state_.decide(m, limits);
    }
    void append(const Measurement &m);
    // The same, taking the measurement's values; `schema_known` as
    // decide() found it.
    void append(Measurement &&m, bool schema_known = false);
    // Room for about `measurements` more (BucketData::reserve).
    void reserve(uint32_t measurements) { data_.reserve(measurements); }
    void mark_full() {
        state_.mark_full();
        data_.mark_full();
    }
    bool full() const { return state_.full(); }

    // {"version": 2, "min": {...}, "max": {...}, "count": n}
    Value control() const;

    // Keeps the measurements so far encoded (a few bytes each instead of
    // their values) until the bucket is encoded whole: a statement holds
    // the open buckets it carries from one flush to the next so. Later
    // measurements are appended as values again.
    void pack();
    uint64_t packed_bytes() const { return packed_bytes_; }
    // The bucket's data, packed measurements included, encoded.
    std::string encode() const;

  private:
    // Folds the measurements held as values into control.min and max,
    // column by column (a column's values are in measurement order, so the
    // summaries are those of folding measurement by measurement).
    void summarise(Value &min, Value &max) const;

    ObjectId id_;
    BucketState state_;
    std::string time_field_;
    BucketData data_;
    std::vector<std::string> packed_;  // encoded runs of the first measurements
    uint64_t packed_bytes_ = 0;
    // control.min and max of the packed measurements.
    Value min_ = Value::object();
    Value max_ = Value::object();
};

// A tail (doc/ARCHITECTURE.md, "Tails"): measurements that a later
// statement appended to a stored bucket, kept in a bucket-table row of their
// own until they are folded into the bucket, so that an append writes what
// it appends and not the whole bucket. Each append takes the bucket's next
// seq (1, 2, ...); a tail holds the appends from `first` to `seq`, more
// than one when later ones were written into it in place.
struct TailRef {
    ObjectId bucket;
    int64_t seq;
    // The end of the bucket's span when the tail was written: the tail's
    // max_time, a bound that no append to it moves.
    std::optional<UnixMicros> until;
    // The seq of its first append, when it is not `seq`.
    std::optional<int64_t> first = std::nullopt;
};

// A tail row's control: {"version": 2, "min": {<time>: the bucket's start},
// "max": {<time>: the tail's latest time}, "count": n, "tail": {"bucket":
// "<hex>", "seq": n[, "until": <the bucket's start + span>][, "first": n]}}.
// The bucket's start as min keeps the row within its bucket's time range,
// for pruning and the time merge; the fields are not summarised, so
// pruning by them keeps the row.
Value tail_control(const std::string &time_field, UnixMicros bucket_start, UnixMicros latest,
                   uint32_t count, const TailRef &ref);
// The tail a control belongs to; nullopt for a bucket's own control.
std::optional<TailRef> tail_ref(const Value &control);

// Where a bucket that has as many tails as it may keep puts `appended`
// more measurements: merged with its latest tails into one tail (the
// index of the first tail merged), or, once its tails and `appended` hold
// as many measurements as the bucket row, folded with every tail into the
// bucket row (nullopt). The tails merged are the latest ones, as long as
// each holds no more than those merged after it (at least one): a
// measurement is then written again about log(n) times before the bucket
// takes it, and the bucket row is written again only as it doubles,
// rather than each time its tails reach the limit (doc/ARCHITECTURE.md,
// "Tails").
std::optional<size_t> first_tail_to_merge(const std::vector<uint32_t> &tail_counts,
                                          uint64_t bucket_count, uint64_t appended);

// The bucket `data` stored under (id, min_time) without the measurements
// at `positions` (0-based, any order): control recomputed from the rest,
// control.min.<time> kept at the bucket's start (doc/REFERENCE.md §3.6,
// DELETE). Throws Error(BadValue) when no measurement would be left: an
// empty bucket is deleted, never written.
Bucket without_measurements(const ObjectId &id, UnixMicros min_time, const std::string &time_field,
                            const BucketData &data, std::vector<uint32_t> positions);

// The control of `rest`, what a DELETE leaves of a stored row whose
// control was `stored`: a tail's stays a tail's, of the same bucket and seq.
Value control_after_removal(const Bucket &rest, const Value &stored, const std::string &time_field);

// Checks a bucket row written directly to the bucket table
// (doc/REFERENCE.md, Privileges): control is {"version": 1 or 2, ...} with a
// count, if any, that matches the data, the data holds at least one
// measurement, and every measurement has a date in the time field within
// [min_time, max_time]. The time checks are skipped when time_field is
// empty (the collection is not known yet, as during a restore). Throws
// Error(BadValue).
void check_bucket_row(const BucketData &data, const Value &control, const std::string &time_field,
                      UnixMicros min_time, UnixMicros max_time);

}  // namespace tscoll
