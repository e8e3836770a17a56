// Reading a bucket for float8 arithmetic: the time column and a few fields,
// numbers as doubles without building values.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/bucket_bytes.hpp"
#include "core/bucket_data.hpp"
#include "core/column_codec.hpp"

namespace tscoll {

using namespace bucket_bytes;

namespace {

// One version 1 entry of a Float8Column.
void read_float8(Reader &r, Float8Column &c, int64_t &previous_date) {
    uint8_t tag = r.peek();
    if (tag == kDouble) {
        r.byte();
        double d;
        std::memcpy(&d, r.bytes(8).data(), 8);
        if (!std::isfinite(d))
            corrupt("a number that is not finite");
        c.numbers.push_back(d == 0 ? 0.0 : d);  // as double_value: -0 reads as 0
    } else if (tag == kInteger) {
        r.byte();
        c.numbers.push_back(static_cast<double>(unzigzag(r.varint())));
    } else {
        c.others.emplace_back(static_cast<uint32_t>(c.numbers.size()), r.value(previous_date, 0));
        c.numbers.push_back(0);
    }
}

// A version 2 column as float8: numbers as doubles, other values whole.
// A dense column keeps no positions.
void read_float8_values(Reader &r, uint64_t n, uint32_t count, std::string_view name,
                        Float8Column &c) {
    c.dense = n == count;
    if (!c.dense)
        c.positions = read_positions(r, n, count, name);
    Codec kind = static_cast<Codec>(r.peek());
    if (kind == Codec::Scaled) {  // the texts' scales: a double has none
        r.byte();
        DisplayScales::read(r, n);
        if (!is_number_codec(r.peek()))
            corrupt("display scales before a column that is not of numbers");
        kind = static_cast<Codec>(r.peek());
    }
    if (kind != Codec::PackedDecimals)
        c.numbers.reserve(n);
    switch (kind) {
        case Codec::Tagged: {
            r.byte();
            int64_t previous_date = 0;
            for (size_t i = 0; i < n; i++)
                read_float8(r, c, previous_date);
            return;
        }
        case Codec::Integers:
        case Codec::PackedIntegerDeltas: {
            r.byte();
            std::vector<int64_t> integers;
            read_integer_column(r, kind, n, integers);
            for (int64_t i : integers)
                c.numbers.push_back(static_cast<double>(i));
            return;
        }
        case Codec::PackedDecimalDeltas:
            r.byte();
            codec::read_packed_decimal_deltas(r, n, c.numbers);
            return;
        case Codec::Decimals:
            r.byte();
            codec::read_decimals(r, n, c.numbers);
            return;
        case Codec::PackedDecimals:
            r.byte();
            c.packed = codec::read_packed_decimals(r, n);
            return;
        case Codec::Xor:
            r.byte();
            codec::read_xor(r, n, c.numbers);
            for (double &d : c.numbers) {
                if (!std::isfinite(d))
                    corrupt("a number that is not finite");
                d = d == 0 ? 0.0 : d;
            }
            return;
        default: {
            BucketColumn values;
            read_values(r, c.dense ? read_positions(r, n, count, name) : c.positions, {}, values);
            for (Value &v : values.values) {
                c.others.emplace_back(static_cast<uint32_t>(c.numbers.size()), std::move(v));
                c.numbers.push_back(0);
            }
            return;
        }
    }
}

// A version 2 time column, which every measurement has (no positions
// stored): every measurement's time.
void read_times(Reader &r, uint32_t count, std::vector<UnixMicros> &times) {
    if (static_cast<Codec>(r.peek()) == Codec::Dates) {
        r.byte();
        codec::read_dates(r, count, times);
        return;
    }
    if (static_cast<Codec>(r.peek()) == Codec::PackedDates) {
        r.byte();
        codec::read_packed_dates(r, count, times);
        return;
    }
    BucketColumn values;
    read_values(r, read_positions(r, count, count, ""), {}, values);
    for (const Value &v : values.values) {
        if (!v.is(Value::Kind::Date))
            corrupt("a measurement has no time");
        times.push_back(v.as_date());
    }
}

// A version 1 column as float8, and the times when it is the time column.
void read_v1_float8(Reader &r, const ColumnHead &head, uint32_t count, bool is_time,
                    Float8Column *column, std::vector<UnixMicros> &times) {
    int64_t position = -1;
    int64_t previous_date = 0;
    for (uint64_t j = 0; j < head.n; j++) {
        position = next_position(r, position, count, head.name);
        if (is_time) {
            Value t = r.value(previous_date, 0);
            if (!t.is(Value::Kind::Date))
                corrupt("a measurement has no time");
            times[position] = t.as_date();
        } else if (column != nullptr) {
            column->positions.push_back(static_cast<uint32_t>(position));
            read_float8(r, *column, previous_date);
        } else {
            r.skip(0);
        }
    }
}

}  // namespace

Float8Cursor::Entry Float8Cursor::find(uint32_t position) {
    const std::vector<uint32_t> &positions = column_->positions;
    if (dense_) {
        if (position >= column_->size())
            return Entry{};
        next_ = position;
    } else {
        while (next_ < positions.size() && positions[next_] < position)
            next_++;
        if (next_ >= positions.size() || positions[next_] != position)
            return Entry{};
    }
    const auto &others = column_->others;
    while (other_ < others.size() && others[other_].first < next_)
        other_++;
    if (other_ < others.size() && others[other_].first == next_)
        return Entry{true, &others[other_].second, 0};
    return Entry{true, nullptr, column_->number(next_)};
}

Float8Columns BucketData::decode_float8(std::string_view bytes, const std::string &time_field,
                                        const std::vector<std::string> &fields) {
    Body b = open_body(bytes);
    Float8Columns result;
    result.fields.resize(fields.size());
    std::vector<std::string_view> names;  // a sort finds one twice: no set built per bucket
    size_t densest = 0;
    bool has_time = false;
    for (uint64_t i = 0; i < b.columns; i++) {
        ColumnHead head = next_column(b);
        names.push_back(head.name);
        densest = std::max(densest, static_cast<size_t>(head.n));
        auto field = std::find(fields.begin(), fields.end(), head.name);
        Float8Column *column =
            field != fields.end() ? &result.fields[field - fields.begin()] : nullptr;
        bool is_time = head.name == time_field;
        if (is_time) {
            if (head.n != b.count)
                corrupt("a measurement has no time");
            has_time = true;
        }
        if (b.version == 1) {
            if (is_time)
                result.times.resize(head.n);
            read_v1_float8(b.reader, head, b.count, is_time, column, result.times);
        } else if (is_time || column != nullptr) {
            Reader block(head.block);
            if (is_time)
                read_times(block, b.count, result.times);
            else
                read_float8_values(block, head.n, b.count, head.name, *column);
            check_end(block, head.name);
        }
    }
    if (!b.reader.at_end())
        corrupt("trailing bytes");
    std::sort(names.begin(), names.end());
    auto twice = std::adjacent_find(names.begin(), names.end());
    if (twice != names.end())
        corrupt("field \"" + std::string(*twice) + "\" appears twice");
    check_densest(densest, b.count);
    if (!has_time && b.count > 0)
        corrupt("a measurement has no time");
    return result;
}

}  // namespace tscoll
