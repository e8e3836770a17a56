#include "core/bucket.hpp"

#include <algorithm>

#include "core/bucket_fold.hpp"
#include "core/compare.hpp"
#include "core/error.hpp"

namespace tscoll {

namespace {

constexpr int64_t kMicrosPerSecond = 1000000;

}  // namespace

UnixMicros bucket_start(UnixMicros t, int64_t rounding_seconds) {
    int64_t seconds = floor_div(t, kMicrosPerSecond);
    return floor_div(seconds, rounding_seconds) * rounding_seconds * kMicrosPerSecond;
}

Bucket::Decision BucketState::decide(const Measurement &m, const BucketingLimits &limits) const {
    if (m.time - min_time_ >= limits.max_span_seconds * kMicrosPerSecond)
        return {Rollover::TimeForward, false};
    if (m.time < min_time_)
        return {Rollover::TimeBackward, false};
    if (count_ >= limits.max_count)
        return {Rollover::Count, false};
    bool large = false;
    uint64_t new_size = size_ + m.bson_size;
    if (new_size > static_cast<uint64_t>(limits.max_size)) {
        if (count_ >= limits.min_count ||
            new_size > static_cast<uint64_t>(BucketingLimits::kLargeMeasurementsMaxSize))
            return {Rollover::Size, false};
        large = true;
    }
    Schema::Fit fit = schema_.fit(m.fields);
    if (fit == Schema::Fit::Conflict)
        return {Rollover::SchemaChange, false};
    return {Rollover::None, large, fit == Schema::Fit::Known};
}

void BucketState::add(const Value &fields, uint64_t bson_size, bool schema_known) {
    count_++;
    size_ += bson_size;
    if (!schema_known)
        schema_.add(fields);
}

void BucketState::add(const BucketData &data) {
    // Field by field: a column holds its values in measurement order, so
    // the schema comes out as measurement by measurement, and no
    // measurement is rebuilt.
    if (data.count() > 0)
        schema_.add(Value::object());
    for (const BucketColumn &column : data.columns())
        schema_.add_field(column.name, column.values);
    count_ += data.count();
    size_ += data.size();
    if (data.full())
        full_ = true;
}

void BucketState::add(const BucketOutline &outline) {
    if (outline.count > 0)
        schema_.add(Value::object());
    for (const auto &[name, values] : outline.fields)
        schema_.add_field(name, values);
    count_ += outline.count;
    size_ += outline.size;
    if (outline.full)
        full_ = true;
}

Bucket::Bucket(ObjectId id, UnixMicros min_time, std::string time_field)
    : id_(id), state_(min_time), time_field_(std::move(time_field)) {}

Bucket::Bucket(ObjectId id, UnixMicros min_time, std::string time_field, BucketData data)
    : id_(id), state_(min_time), time_field_(std::move(time_field)), data_(std::move(data)) {
    state_.add(data_);
}

void Bucket::append(const Measurement &m) {
    append(Measurement(m));
}

void Bucket::append(Measurement &&m, bool schema_known) {
    state_.add(m.fields, m.bson_size, schema_known);
    data_.append(std::move(m.fields), m.bson_size);
}

void Bucket::pack() {
    if (data_.count() == 0)
        return;
    summarise(min_, max_);
    packed_.push_back(data_.encode());
    packed_.back().shrink_to_fit();
    packed_bytes_ += packed_.back().size();
    data_ = BucketData();
}

std::string Bucket::encode() const {
    if (packed_.empty())
        return data_.encode();
    std::vector<std::string_view> runs(packed_.begin(), packed_.end());
    if (std::optional<std::string> folded = fold_typed_data(runs, data_, state_.full()))
        return std::move(*folded);
    BucketData whole = BucketData::decode(packed_.front());
    for (size_t i = 1; i < packed_.size(); i++)
        whole.append(BucketData::decode(packed_[i]));
    whole.append(data_);
    if (state_.full())
        whole.mark_full();
    return whole.encode();
}

void Bucket::summarise(Value &min, Value &max) const {
    for (const BucketColumn &column : data_.columns()) {
        fold_min(min, column.name, column.values);
        fold_max(max, column.name, column.values);
    }
}

Value Bucket::control() const {
    Value min = min_;
    Value max = max_;
    summarise(min, max);
    // control.min.<time> is the bucket's rounded start, not its earliest
    // measurement; the time field is written as the canonical text
    // (doc/REFERENCE.md, How measurements map to doc).
    for (Member &m : min.as_object())
        if (m.key == time_field_)
            m.value = Value::string(format_canonical_date(state_.min_time()));
    for (Member &m : max.as_object())
        if (m.key == time_field_ && m.value.is(Value::Kind::Date))
            m.value = Value::string(format_canonical_date(m.value.as_date()));
    Value control = Value::object();
    // 2: the data is in the compressed format 2 (doc/ARCHITECTURE.md, The
    // bucket data format).
    control.add("version", Value::number(static_cast<int64_t>(BucketData::kFormatVersion)));
    control.add("min", std::move(min));
    control.add("max", std::move(max));
    control.add("count", Value::number(static_cast<int64_t>(state_.count())));
    return control;
}

Value tail_control(const std::string &time_field, UnixMicros bucket_start, UnixMicros latest,
                   uint32_t count, const TailRef &ref) {
    Value min = Value::object();
    min.add(time_field, Value::string(format_canonical_date(bucket_start)));
    Value max = Value::object();
    max.add(time_field, Value::string(format_canonical_date(latest)));
    Value tail = Value::object();
    tail.add("bucket", Value::string(ref.bucket.to_hex()));
    tail.add("seq", Value::number(ref.seq));
    if (ref.until)
        tail.add("until", Value::string(format_canonical_date(*ref.until)));
    if (ref.first && *ref.first != ref.seq)
        tail.add("first", Value::number(*ref.first));
    Value control = Value::object();
    control.add("version", Value::number(static_cast<int64_t>(BucketData::kFormatVersion)));
    control.add("min", std::move(min));
    control.add("max", std::move(max));
    control.add("count", Value::number(static_cast<int64_t>(count)));
    control.add("tail", std::move(tail));
    return control;
}

std::optional<TailRef> tail_ref(const Value &control) {
    const Value *tail = control.is(Value::Kind::Object) ? control.find("tail") : nullptr;
    if (tail == nullptr)
        return std::nullopt;
    const Value *bucket = tail->is(Value::Kind::Object) ? tail->find("bucket") : nullptr;
    const Value *seq = tail->is(Value::Kind::Object) ? tail->find("seq") : nullptr;
    std::optional<int64_t> number = seq ? seq->as_exact_int64() : std::nullopt;
    if (bucket == nullptr || !bucket->is(Value::Kind::String) || !number)
        throw Error(ErrorCode::Corrupt,
                    "invalid tail control: control.tail needs a bucket and a seq");
    const Value *until = tail->find("until");
    std::optional<UnixMicros> end = until != nullptr && until->is(Value::Kind::String)
                                        ? parse_canonical_date(until->as_string())
                                        : std::nullopt;
    const Value *first = tail->find("first");
    std::optional<int64_t> first_seq = first ? first->as_exact_int64() : std::nullopt;
    return TailRef{ObjectId::from_hex(bucket->as_string()), *number, end, first_seq};
}

std::optional<size_t> first_tail_to_merge(const std::vector<uint32_t> &tail_counts,
                                          uint64_t bucket_count, uint64_t appended) {
    uint64_t in_tails = appended;
    for (uint32_t count : tail_counts)
        in_tails += count;
    if (tail_counts.empty() || in_tails >= bucket_count)
        return std::nullopt;
    size_t first = tail_counts.size();
    uint64_t merged = appended;
    do
        merged += tail_counts[--first];
    while (first > 0 && tail_counts[first - 1] <= merged);
    return first;
}

Value control_after_removal(const Bucket &rest, const Value &stored,
                            const std::string &time_field) {
    Value control = rest.control();
    std::optional<TailRef> ref = tail_ref(stored);
    if (!ref)
        return control;
    const Value *max = control.find("max");
    const Value *latest = max != nullptr ? max->find(time_field) : nullptr;
    std::optional<UnixMicros> t = latest != nullptr && latest->is(Value::Kind::String)
                                      ? parse_canonical_date(latest->as_string())
                                      : std::nullopt;
    if (!t)
        throw Error(ErrorCode::Corrupt, "a tail without times");
    return tail_control(time_field, rest.min_time(), *t, rest.count(), *ref);
}

Bucket without_measurements(const ObjectId &id, UnixMicros min_time, const std::string &time_field,
                            const BucketData &data, std::vector<uint32_t> positions) {
    std::sort(positions.begin(), positions.end());
    Bucket rest(id, min_time, time_field);
    if (data.full())
        rest.mark_full();
    std::vector<Value> measurements = data.measurements();
    for (uint32_t i = 0; i < measurements.size(); i++) {
        if (std::binary_search(positions.begin(), positions.end(), i))
            continue;
        const Value *time = measurements[i].find(time_field);
        if (time == nullptr || !time->is(Value::Kind::Date))
            throw Error(ErrorCode::Corrupt, "bucket data is corrupt: a measurement has no time",
                        "Bucket _id " + id.to_hex() + ".");
        uint64_t size = bson_document_size(measurements[i]);
        rest.append(Measurement{time->as_date(), std::move(measurements[i]), size});
    }
    if (rest.count() == 0)
        throw Error(ErrorCode::BadValue, "a bucket cannot be left without measurements", {},
                    "Delete the bucket instead.");
    return rest;
}

namespace {

[[noreturn]] void bad_row(const std::string &problem) {
    throw Error(ErrorCode::BadValue, "invalid bucket row: " + problem, {},
                "Write measurements through the collection's view.");
}

}  // namespace

void check_bucket_row(const BucketData &data, const Value &control, const std::string &time_field,
                      UnixMicros min_time, UnixMicros max_time) {
    const Value *version = control.is(Value::Kind::Object) ? control.find("version") : nullptr;
    // Rows written before the compressed format have version 1; both read.
    std::optional<int64_t> number = version ? version->as_exact_int64() : std::nullopt;
    if (number != 1 && number != 2)
        bad_row("control.version must be 1 or 2");
    if (data.count() == 0)
        bad_row("data holds no measurement");
    if (const Value *count = control.find("count");
        count && count->as_exact_int64() != data.count())
        bad_row("control.count is not the number of measurements in data");
    if (time_field.empty())
        return;
    auto time = std::find_if(data.columns().begin(), data.columns().end(),
                             [&](const BucketColumn &c) { return c.name == time_field; });
    if (time == data.columns().end() || time->positions.size() != data.count())
        bad_row("a measurement in data has no time field \"" + time_field + "\"");
    for (const Value &t : time->values)
        if (!t.is(Value::Kind::Date) || t.as_date() < min_time || t.as_date() > max_time)
            bad_row("a time in data is not a date within control.min and control.max of \"" +
                    time_field + "\"");
}

}  // namespace tscoll
