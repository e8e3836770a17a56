#include "core/bucket_data.hpp"

#include <algorithm>
#include <cmath>

#include "core/bucket_bytes.hpp"
#include "core/column_codec.hpp"
#include "core/number.hpp"

namespace tscoll {

using namespace bucket_bytes;

BucketColumn &BucketData::column(const std::string &name) {
    auto [it, inserted] = index_.try_emplace(name, columns_.size());
    if (!inserted)
        return columns_[it->second];
    BucketColumn &c = columns_.emplace_back(BucketColumn{name, {}, {}});
    if (count_ == 0) {
        c.positions.reserve(expected_);
        c.values.reserve(expected_);
    }
    return c;
}

void BucketData::append(const Value &measurement, uint64_t bson_size) {
    append(Value(measurement), bson_size);
}

void BucketData::append(Value &&measurement, uint64_t bson_size) {
    Value::Object &members = measurement.as_object();
    for (size_t i = 0; i < members.size(); i++) {
        Member &m = members[i];
        // Measurements mostly list their fields in one order: the column at
        // the member's position is tried before the index.
        BucketColumn &c =
            i < columns_.size() && columns_[i].name == m.key ? columns_[i] : column(m.key);
        // A key repeated within one measurement keeps its first value, as jsonb does not
        // allow repeats; the guard keeps positions strictly increasing regardless.
        if (!c.positions.empty() && c.positions.back() == count_)
            continue;
        c.positions.push_back(count_);
        c.values.push_back(std::move(m.value));
    }
    count_++;
    size_ += bson_size;
}

void BucketData::append(const BucketData &more) {
    append(BucketData(more));
}

void BucketData::append(BucketData &&more) {
    for (BucketColumn &from : more.columns_) {
        BucketColumn &c = column(from.name);
        for (size_t i = 0; i < from.positions.size(); i++) {
            c.positions.push_back(count_ + from.positions[i]);
            c.values.push_back(std::move(from.values[i]));
        }
    }
    count_ += more.count_;
    size_ += more.size_;
}

std::vector<Value> BucketData::measurements() const {
    std::vector<Value> out(count_, Value::object());
    for (const BucketColumn &c : columns_)
        for (size_t i = 0; i < c.positions.size(); i++)
            out[c.positions[i]].add(c.name, c.values[i]);
    return out;
}

namespace bucket_bytes {

namespace {

// Decimals k / 10^scale in the smallest of their codecs: packed steps,
// varint steps, or the frame of reference, which packed steps must beat by
// an eighth (any value of a frame reads alone, which a read of a few rows
// uses).
void write_decimals(Writer &w, const codec::DecimalKs &decimals) {
    const std::vector<int64_t> &ks = decimals.ks;
    size_t deltas = codec::varint_deltas_size(ks);
    size_t frame_size = codec::packed_frame_size(ks);
    std::optional<std::string> steps = codec::packed_steps(ks);
    bool frame = frame_size <= deltas;
    if (steps && steps->size() < deltas &&
        (!frame || steps->size() < frame_size - frame_size / 8)) {
        w.byte(static_cast<uint8_t>(Codec::PackedDecimalDeltas));
        w.byte(decimals.scale);
        w.bytes(*steps);
    } else if (frame) {
        w.byte(static_cast<uint8_t>(Codec::PackedDecimals));
        codec::write_packed_decimals(w, decimals);
    } else {
        w.byte(static_cast<uint8_t>(Codec::Decimals));
        codec::write_decimals(w, decimals);
    }
}

}  // namespace

void NumberColumn::add_integer(int64_t i) {
    integers.push_back(i);
    doubles.push_back(static_cast<double>(i));
    // The integer itself, not its double: 2^53 + 1 rounds to 2^53.
    constexpr int64_t kExact = int64_t{1} << 53;
    all_doubles = all_doubles && i >= -kExact && i <= kExact;
}

void NumberColumn::add_real(double d) {
    all_integers = false;
    doubles.push_back(d);
}

bool write_number_column(Writer &w, const NumberColumn &numbers,
                         const std::optional<DisplayScales> &scales) {
    if (!numbers.all_integers && !numbers.all_doubles)
        return false;
    if (scales) {
        w.byte(static_cast<uint8_t>(Codec::Scaled));
        scales->write(w);
    }
    if (numbers.all_integers) {
        // Packed steps where they are smaller than varint steps.
        std::optional<std::string> packed = codec::packed_steps(numbers.integers);
        if (packed && packed->size() < codec::varint_deltas_size(numbers.integers)) {
            w.byte(static_cast<uint8_t>(Codec::PackedIntegerDeltas));
            w.bytes(*packed);
        } else {
            w.byte(static_cast<uint8_t>(Codec::Integers));
            codec::write_integers(w, numbers.integers);
        }
    } else if (std::optional<codec::DecimalKs> decimals = codec::decimal_ks(numbers.doubles)) {
        write_decimals(w, *decimals);
    } else {
        w.byte(static_cast<uint8_t>(Codec::Xor));
        codec::write_xor(w, numbers.doubles);
    }
    return true;
}

void write_date_column(Writer &w, const std::vector<int64_t> &dates) {
    std::optional<std::string> packed = codec::packed_dates(dates);
    if (packed && packed->size() < codec::dates_size(dates)) {
        w.byte(static_cast<uint8_t>(Codec::PackedDates));
        w.bytes(*packed);
    } else {
        w.byte(static_cast<uint8_t>(Codec::Dates));
        codec::write_dates(w, dates);
    }
}

void write_objectid_column(Writer &w, const std::vector<ObjectId> &ids) {
    ByteWriter deltas;
    codec::write_objectids(deltas, ids);
    std::string bytes = deltas.take();
    std::optional<std::string> packed = codec::packed_objectids(ids);
    if (packed && packed->size() < bytes.size()) {
        w.byte(static_cast<uint8_t>(Codec::PackedObjectIds));
        w.bytes(*packed);
    } else {
        w.byte(static_cast<uint8_t>(Codec::ObjectIds));
        w.bytes(bytes);
    }
}

void write_positions(Writer &w, const std::vector<uint32_t> &positions, uint32_t count) {
    if (positions.size() == count)
        return;
    int64_t previous = -1;
    for (uint32_t position : positions) {
        w.varint(static_cast<uint64_t>(position - previous - 1));
        previous = position;
    }
}

std::string write_bucket(uint32_t count, uint64_t size, bool full,
                         const std::vector<ColumnBlock> &columns) {
    Writer w;
    w.bytes(std::string_view(kMagic, sizeof kMagic));
    w.byte(BucketData::kFormatVersion | (full ? kFullFlag : 0));
    w.varint(count);
    w.varint(size);
    w.varint(columns.size());
    for (const ColumnBlock &c : columns) {
        w.text(c.name);
        w.varint(c.n);
        w.text(c.block);
    }
    uint32_t checksum = crc32c(w.buffer());
    for (int i = 0; i < 4; i++)
        w.byte(static_cast<uint8_t>(checksum >> (8 * i)));
    return w.take();
}

}  // namespace bucket_bytes

namespace {

// A column of numbers in a typed codec: integers when all are, doubles when
// all are exact as doubles; after their display scales, when a text keeps
// zeros its value does not need. False, having written nothing, otherwise.
bool write_numbers(Writer &w, const std::vector<Value> &values) {
    NumberColumn numbers;
    std::vector<ExactNumber> exacts;
    for (const Value &v : values) {
        if (!v.is(Value::Kind::Number))
            return false;
        const ExactNumber &exact = exacts.emplace_back(v.as_number().exact());
        if (exact.integer)
            numbers.add_integer(*exact.integer);
        else if (exact.real)
            numbers.add_real(*exact.real);
        else
            return false;
    }
    if (!numbers.all_integers && !numbers.all_doubles)
        return false;
    // (An integer among doubles reads back as a double, with scale 0 all the same.)
    return write_number_column(w, numbers, DisplayScales::of(values, exacts));
}

template <typename T, typename Get>
std::vector<T> all_of_kind(const std::vector<Value> &values, Value::Kind kind, Get get) {
    std::vector<T> out;
    for (const Value &v : values) {
        if (!v.is(kind))
            return {};
        out.push_back(get(v));
    }
    return out;
}

void write_values(Writer &w, const std::vector<Value> &values) {
    auto dates =
        all_of_kind<int64_t>(values, Value::Kind::Date, [](const Value &v) { return v.as_date(); });
    if (!values.empty() && dates.size() == values.size()) {
        write_date_column(w, dates);
        return;
    }
    auto ids = all_of_kind<ObjectId>(values, Value::Kind::ObjectId,
                                     [](const Value &v) { return v.as_objectid(); });
    if (!values.empty() && ids.size() == values.size()) {
        write_objectid_column(w, ids);
        return;
    }
    if (write_numbers(w, values))
        return;
    w.byte(static_cast<uint8_t>(Codec::Tagged));
    int64_t previous_date = 0;
    for (const Value &v : values)
        w.value(v, previous_date);
}

// A column's block: its positions, unless every measurement has the field,
// then its values.
std::string encode_column(const BucketColumn &c, uint32_t count) {
    Writer w;
    write_positions(w, c.positions, count);
    write_values(w, c.values);
    return w.take();
}

// Appends a version 1 column's values to c (or skips them when c is null),
// leaving out the measurements outside the window.
void read_v1_values(Reader &r, uint64_t n, uint32_t count, std::string_view name,
                    const std::vector<bool> &in_window, BucketColumn *c) {
    if (c != nullptr) {
        c->positions.reserve(n);
        c->values.reserve(n);
    }
    int64_t position = -1;
    int64_t previous_date = 0;
    for (uint64_t j = 0; j < n; j++) {
        position = next_position(r, position, count, name);
        if (c == nullptr) {
            r.skip(0);
        } else if (!in_window.empty() && !in_window[position]) {
            r.skip_in_column(previous_date);
        } else {
            c->positions.push_back(static_cast<uint32_t>(position));
            c->values.push_back(r.value(previous_date, 0));
        }
    }
}

}  // namespace

std::string BucketData::encode() const {
    std::vector<ColumnBlock> blocks;
    blocks.reserve(columns_.size());
    for (const BucketColumn &c : columns_)
        blocks.push_back({c.name, c.positions.size(), encode_column(c, count_)});
    return write_bucket(count_, size_, full_, blocks);
}

BucketData BucketData::decode(std::string_view bytes) {
    return decode(bytes, nullptr);
}

BucketData BucketData::decode(std::string_view bytes, const std::vector<std::string> *wanted,
                              const std::optional<TimeWindow> &window) {
    Body b = open_body(bytes);
    BucketData data;
    data.count_ = b.count;
    data.size_ = b.size;
    data.full_ = b.full;
    size_t densest = 0;
    // Which measurements are in the window: those of `rows` until the time
    // column is read.
    std::vector<bool> in_window;
    if (window && window->rows != nullptr) {
        if (window->rows->size() != b.count)
            corrupt("a row mask of another bucket");
        in_window = *window->rows;
    }
    const std::vector<bool> every_row;
    for (uint64_t i = 0; i < b.columns; i++) {
        ColumnHead head = next_column(b);
        std::string name(head.name);
        if (data.index_.count(name) != 0)
            corrupt("field \"" + name + "\" appears twice");
        densest = std::max(densest, static_cast<size_t>(head.n));
        bool is_wanted =
            !wanted || std::find(wanted->begin(), wanted->end(), name) != wanted->end();
        bool is_time = window && name == window->time_field;
        const std::vector<bool> &rows = is_time ? every_row : in_window;
        if (b.version == 1) {
            read_v1_values(b.reader, head.n, b.count, name, rows,
                           is_wanted ? &data.column(name) : nullptr);
        } else if (is_wanted) {
            Reader block(head.block);
            std::vector<uint32_t> positions = read_positions(block, head.n, b.count, name);
            read_values(block, positions, rows, data.column(name));
            check_end(block, name);
        }
        if (is_wanted && is_time) {
            const BucketColumn &c = data.column(name);
            std::vector<bool> in_time(b.count, false);
            for (size_t j = 0; j < c.positions.size(); j++)
                in_time[c.positions[j]] =
                    (in_window.empty() || in_window[c.positions[j]]) &&
                    (!c.values[j].is(Value::Kind::Date) || window->contains(c.values[j].as_date()));
            in_window = std::move(in_time);
        }
    }
    if (!b.reader.at_end())
        corrupt("trailing bytes");
    check_densest(densest, data.count_);
    return data;
}

namespace {

// A value of the one kind a codec holds, standing for the column's values;
// nullopt for tagged values.
std::optional<Value> kind_of_codec(uint8_t codec) {
    switch (static_cast<Codec>(codec)) {
        case Codec::Tagged:
            return std::nullopt;
        case Codec::Dates:
        case Codec::PackedDates:
            return Value::date(0);
        case Codec::ObjectIds:
        case Codec::PackedObjectIds:
            return Value::objectid(ObjectId{});
        default:
            if (codec == static_cast<uint8_t>(Codec::Scaled) || is_number_codec(codec))
                return Value::number(0);
            corrupt("unknown codec " + std::to_string(codec));
    }
}

}  // namespace

BucketOutline BucketData::outline(std::string_view bytes) {
    Body b = open_body(bytes);
    BucketOutline outline{b.count, b.size, b.full, {}};
    if (b.version == 1) {
        BucketData whole = decode(bytes);
        for (BucketColumn &c : whole.columns_)
            outline.fields.emplace_back(std::move(c.name), std::move(c.values));
        return outline;
    }
    size_t densest = 0;
    for (uint64_t i = 0; i < b.columns; i++) {
        ColumnHead head = next_column(b);
        std::string name(head.name);
        for (const auto &field : outline.fields)
            if (field.first == name)
                corrupt("field \"" + name + "\" appears twice");
        densest = std::max(densest, static_cast<size_t>(head.n));
        Reader block(head.block);
        std::vector<uint32_t> positions = read_positions(block, head.n, b.count, name);
        std::optional<Value> kind =
            head.n > 0 && !block.at_end() ? kind_of_codec(block.peek()) : std::nullopt;
        if (kind) {
            outline.fields.emplace_back(std::move(name), std::vector<Value>{std::move(*kind)});
            continue;
        }
        BucketColumn c;
        read_values(block, positions, {}, c);
        check_end(block, name);
        outline.fields.emplace_back(std::move(name), std::move(c.values));
    }
    if (!b.reader.at_end())
        corrupt("trailing bytes");
    check_densest(densest, outline.count);
    return outline;
}

}  // namespace tscoll
