#include "core/bucket_data.hpp"

#include <bson/bson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/byte_io.hpp"
#include "core/column_codec.hpp"
#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {

namespace {

constexpr char kMagic[4] = {'T', 'S', 'C', 'B'};
// Set in the format byte of a bucket closed by size.
constexpr uint8_t kFullFlag = 0x80;
constexpr size_t kMaxDepth = 200;  // well above the 100 levels a measurement may have

enum Tag : uint8_t {
    kNull = 0,
    kFalse = 1,
    kTrue = 2,
    kInteger = 3,   // zigzag varint
    kDouble = 4,    // 8 bytes, little-endian IEEE 754
    kDecimal = 5,   // varint length + decimal text
    kString = 6,    // varint length + UTF-8 bytes
    kDate = 7,      // zigzag varint: microseconds minus the column's previous date
    kObjectId = 8,  // 12 bytes
    kObject = 9,    // varint count, then (varint length + key, value) each
    kArray = 10,    // varint count, then values
};

class Writer : public ByteWriter {
  public:
    void value(const Value &v, int64_t &previous_date);

  private:
    void number(const Number &n);
};

void Writer::number(const Number &n) {
    ExactNumber exact = exact_number(n.text);
    if (exact.integer) {
        byte(kInteger);
        varint(zigzag(*exact.integer));
    } else if (exact.real) {
        byte(kDouble);
        char raw[8];
        std::memcpy(raw, &*exact.real, 8);  // the machine is little-endian (checked in decode)
        bytes(std::string_view(raw, 8));
    } else {
        byte(kDecimal);
        text(n.text);
    }
}

void Writer::value(const Value &v, int64_t &previous_date) {
    switch (v.kind()) {
        case Value::Kind::Null:
            byte(kNull);
            break;
        case Value::Kind::Bool:
            byte(v.as_bool() ? kTrue : kFalse);
            break;
        case Value::Kind::Number:
            number(v.as_number());
            break;
        case Value::Kind::String:
            byte(kString);
            text(v.as_string());
            break;
        case Value::Kind::Date:
            byte(kDate);
            varint(zigzag(static_cast<int64_t>(static_cast<uint64_t>(v.as_date()) -
                                               static_cast<uint64_t>(previous_date))));
            previous_date = v.as_date();
            break;
        case Value::Kind::ObjectId:
            byte(kObjectId);
            bytes(std::string_view(reinterpret_cast<const char *>(v.as_objectid().bytes.data()),
                                   ObjectId::kSize));
            break;
        case Value::Kind::Object: {
            byte(kObject);
            varint(v.as_object().size());
            int64_t nested_date = 0;
            for (const Member &m : v.as_object()) {
                text(m.key);
                value(m.value, nested_date);
            }
            break;
        }
        case Value::Kind::Array: {
            byte(kArray);
            varint(v.as_array().size());
            int64_t nested_date = 0;
            for (const Value &e : v.as_array())
                value(e, nested_date);
            break;
        }
    }
}

class Reader : public ByteReader {
  public:
    using ByteReader::ByteReader;
    // Strings, keys and field names: UTF-8 without NUL, as jsonb holds them.
    std::string_view text() {
        std::string_view s = bytes(varint());
        if (!bson_utf8_validate(s.data(), s.size(), false))
            corrupt("text that is not UTF-8");
        return s;
    }
    Value value(int64_t &previous_date, size_t depth);
    // Moves past a value without building it; CRC32C has vouched for it.
    void skip(size_t depth);
    // Moves past a value of a column; dates still advance the column's
    // delta chain.
    void skip_in_column(int64_t &previous_date) {
        if (pos_ < in_.size() && static_cast<uint8_t>(in_[pos_]) == kDate)
            value(previous_date, 0);
        else
            skip(0);
    }
};

Value integer_value(int64_t i) {
    return Value::number(std::to_string(i), static_cast<double>(i));
}

// A number read as a double: jsonb prints -0 as 0, so float8 reads it as 0.
Value double_value(double d) {
    if (!std::isfinite(d))
        corrupt("a number that is not finite");
    return Value::number(shortest_text(d), d == 0 ? 0.0 : d);
}

Value Reader::value(int64_t &previous_date, size_t depth) {
    if (depth > kMaxDepth)
        corrupt("nesting too deep");
    uint8_t tag = byte();
    switch (tag) {
        case kNull:
            return Value::null();
        case kFalse:
        case kTrue:
            return Value::boolean(tag == kTrue);
        case kInteger: {
            return integer_value(unzigzag(varint()));
        }
        case kDouble: {
            double d;
            std::memcpy(&d, bytes(8).data(), 8);
            return double_value(d);
        }
        case kDecimal: {
            std::string_view text_value = text();
            if (!Decimal::parse(text_value))
                corrupt("malformed decimal");
            return Value::number(std::string(text_value));
        }
        case kString:
            return Value::string(std::string(text()));
        case kDate:
            previous_date = static_cast<int64_t>(static_cast<uint64_t>(previous_date) +
                                                 static_cast<uint64_t>(unzigzag(varint())));
            return Value::date(previous_date);
        case kObjectId: {
            ObjectId id;
            std::memcpy(id.bytes.data(), bytes(ObjectId::kSize).data(), ObjectId::kSize);
            return Value::objectid(id);
        }
        case kObject: {
            Value object = Value::object();
            uint64_t n = count();
            int64_t nested_date = 0;
            for (uint64_t i = 0; i < n; i++) {
                std::string key(text());
                object.add(std::move(key), value(nested_date, depth + 1));
            }
            return object;
        }
        case kArray: {
            Value array = Value::array();
            uint64_t n = count();
            int64_t nested_date = 0;
            for (uint64_t i = 0; i < n; i++)
                array.as_array().push_back(value(nested_date, depth + 1));
            return array;
        }
        default:
            corrupt("unknown value tag " + std::to_string(tag));
    }
}

void Reader::skip(size_t depth) {
    if (depth > kMaxDepth)
        corrupt("nesting too deep");
    uint8_t tag = byte();
    switch (tag) {
        case kNull:
        case kFalse:
        case kTrue:
            return;
        case kInteger:
        case kDate:
            varint();
            return;
        case kDouble:
            bytes(8);
            return;
        case kDecimal:
        case kString:
            bytes(varint());
            return;
        case kObjectId:
            bytes(ObjectId::kSize);
            return;
        case kObject:
            for (uint64_t i = 0, n = count(); i < n; i++) {
                bytes(varint());
                skip(depth + 1);
            }
            return;
        case kArray:
            for (uint64_t i = 0, n = count(); i < n; i++)
                skip(depth + 1);
            return;
        default:
            corrupt("unknown value tag " + std::to_string(tag));
    }
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(std::string_view bytes) {
    uint64_t crc = 0xFFFFFFFFu;
    const char *p = bytes.data();
    size_t n = bytes.size();
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t word;
        std::memcpy(&word, p, 8);
        crc = __builtin_ia32_crc32di(crc, word);
    }
    uint32_t crc32 = static_cast<uint32_t>(crc);
    for (; n > 0; p++, n--)
        crc32 = __builtin_ia32_crc32qi(crc32, static_cast<uint8_t>(*p));
    return crc32 ^ 0xFFFFFFFFu;
}
#endif

uint32_t crc32c_portable(std::string_view bytes) {
    static const auto table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    uint32_t crc = 0xFFFFFFFFu;
    for (char ch : bytes)
        crc = table[(crc ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

}  // namespace

BucketColumn &BucketData::column(const std::string &name) {
    auto [it, inserted] = index_.try_emplace(name, columns_.size());
    if (inserted)
        columns_.push_back(BucketColumn{name, {}, {}});
    return columns_[it->second];
}

void BucketData::append(const Value &measurement, uint64_t bson_size) {
    append(Value(measurement), bson_size);
}

void BucketData::append(Value &&measurement, uint64_t bson_size) {
    for (Member &m : measurement.as_object()) {
        BucketColumn &c = column(m.key);
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
    for (const BucketColumn &from : more.columns_) {
        BucketColumn &c = column(from.name);
        for (size_t i = 0; i < from.positions.size(); i++) {
            c.positions.push_back(count_ + from.positions[i]);
            c.values.push_back(from.values[i]);
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

namespace {

// How a version 2 column stores its values (doc/BUCKET_FORMAT.md).
enum class Codec : uint8_t {
    Tagged = 0,  // values as version 1 writes them
    Dates = 1,
    Integers = 2,
    Decimals = 3,
    Xor = 4,
    ObjectIds = 5,
    PackedDecimals = 6,
};

// A column of numbers in a typed codec: integers when all are, doubles when
// all are exact as doubles. False, having written nothing, otherwise.
bool write_numbers(Writer &w, const std::vector<Value> &values) {
    std::vector<int64_t> integers;
    std::vector<double> doubles;
    bool all_integers = true;
    bool all_doubles = true;
    for (const Value &v : values) {
        if (!v.is(Value::Kind::Number))
            return false;
        ExactNumber exact = exact_number(v.as_number().text);
        if (exact.integer) {
            integers.push_back(*exact.integer);
            doubles.push_back(static_cast<double>(*exact.integer));
            all_doubles = all_doubles && std::fabs(doubles.back()) <= codec::kMaxExactInteger;
        } else if (exact.real) {
            all_integers = false;
            doubles.push_back(*exact.real);
        } else {
            return false;
        }
    }
    if (all_integers) {
        w.byte(static_cast<uint8_t>(Codec::Integers));
        codec::write_integers(w, integers);
    } else if (!all_doubles) {
        return false;
    } else if (std::optional<uint8_t> scale = codec::decimal_scale(doubles)) {
        if (codec::packed_is_no_larger(doubles, *scale)) {
            w.byte(static_cast<uint8_t>(Codec::PackedDecimals));
            codec::write_packed_decimals(w, doubles, *scale);
        } else {
            w.byte(static_cast<uint8_t>(Codec::Decimals));
            codec::write_decimals(w, doubles, *scale);
        }
    } else {
        w.byte(static_cast<uint8_t>(Codec::Xor));
        codec::write_xor(w, doubles);
    }
    return true;
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
        w.byte(static_cast<uint8_t>(Codec::Dates));
        codec::write_dates(w, dates);
        return;
    }
    auto ids = all_of_kind<ObjectId>(values, Value::Kind::ObjectId,
                                     [](const Value &v) { return v.as_objectid(); });
    if (!values.empty() && ids.size() == values.size()) {
        w.byte(static_cast<uint8_t>(Codec::ObjectIds));
        codec::write_objectids(w, ids);
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
    if (c.positions.size() < count) {
        int64_t previous = -1;
        for (uint32_t position : c.positions) {
            w.varint(static_cast<uint64_t>(position - previous - 1));
            previous = position;
        }
    }
    write_values(w, c.values);
    return w.take();
}

}  // namespace

std::string BucketData::encode() const {
    Writer w;
    w.bytes(std::string_view(kMagic, sizeof kMagic));
    w.byte(kFormatVersion | (full_ ? kFullFlag : 0));
    w.varint(count_);
    w.varint(size_);
    w.varint(columns_.size());
    for (const BucketColumn &c : columns_) {
        w.text(c.name);
        w.varint(c.positions.size());
        w.text(encode_column(c, count_));
    }
    uint32_t checksum = crc32c(w.buffer());
    for (int i = 0; i < 4; i++)
        w.byte(static_cast<uint8_t>(checksum >> (8 * i)));
    return w.take();
}

BucketData BucketData::decode(std::string_view bytes) {
    return decode(bytes, nullptr);
}

namespace {

// The bucket's body after its checksum and header are checked, positioned
// at the first column.
struct Body {
    Reader reader;
    uint8_t version;
    bool full;
    uint32_t count;
    uint64_t size;
    uint64_t columns;
};

Body open_body(std::string_view bytes) {
    static_assert(sizeof(double) == 8);
    if (bytes.size() < sizeof kMagic + 1 + 4 || std::memcmp(bytes.data(), kMagic, 4) != 0)
        corrupt("not tscoll bucket data");
    std::string_view body = bytes.substr(0, bytes.size() - 4);
    uint32_t stored = 0;
    for (int i = 0; i < 4; i++)
        stored |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[body.size() + i])) << (8 * i);
    if (crc32c(body) != stored)
        corrupt("checksum mismatch");
    Reader r(body.substr(sizeof kMagic));
    uint8_t format = r.byte();
    uint8_t version = static_cast<uint8_t>(format & ~kFullFlag);
    bool full = (format & kFullFlag) != 0;
    if (version != 1 && version != 2)
        corrupt("unknown format version " + std::to_string(version));
    uint64_t count = r.varint();
    if (count > UINT32_MAX)
        corrupt("count out of range");
    // Every measurement's time takes at least a bit, which bounds what a
    // read allocates by the size of the data.
    if (count > 8 * bytes.size())
        corrupt("more measurements than bits of data");
    uint64_t size = r.varint();
    uint64_t columns = r.count();
    return Body{r, version, full, static_cast<uint32_t>(count), size, columns};
}

// A column's name and number of values. In version 1 its positions and
// values follow in the body; in version 2 they are in `block`.
struct ColumnHead {
    std::string_view name;
    uint64_t n;
    std::string_view block;
};

ColumnHead next_column(Body &b) {
    Reader &r = b.reader;
    ColumnHead head{r.text(), 0, {}};
    if (b.version == 1) {
        head.n = r.count();
        return head;
    }
    head.n = r.varint();
    head.block = r.bytes(r.varint());
    if (head.n > b.count)
        corrupt("too many values in field \"" + std::string(head.name) + "\"");
    return head;
}

// The next position of a column, after `position` (-1 before the first).
int64_t next_position(Reader &r, int64_t position, uint32_t count, const std::string_view name) {
    uint64_t gap = r.varint();
    if (gap >= count || position + 1 + static_cast<int64_t>(gap) >= static_cast<int64_t>(count))
        corrupt("position out of range in field \"" + std::string(name) + "\"");
    return position + 1 + static_cast<int64_t>(gap);
}

std::vector<uint32_t> read_positions(Reader &r, uint64_t n, uint32_t count, std::string_view name) {
    std::vector<uint32_t> positions(n);
    if (n == count) {
        for (uint32_t i = 0; i < n; i++)
            positions[i] = i;
        return positions;
    }
    int64_t position = -1;
    for (uint64_t i = 0; i < n; i++) {
        position = next_position(r, position, count, name);
        positions[i] = static_cast<uint32_t>(position);
    }
    return positions;
}

void check_end(const Reader &block, std::string_view name) {
    if (!block.at_end())
        corrupt("trailing bytes in field \"" + std::string(name) + "\"");
}

void check_densest(size_t densest, uint32_t count) {
    // Every measurement has the time field, so some column is dense; this
    // also bounds what measurements() allocates by the size of the data.
    if (densest != count)
        corrupt("no field is present in all " + std::to_string(count) + " measurements");
}

// Appends a version 2 column's values to c, leaving out the measurements
// outside the window (all are in when in_window is empty).
void read_values(Reader &r, const std::vector<uint32_t> &positions,
                 const std::vector<bool> &in_window, BucketColumn &c) {
    size_t n = positions.size();
    auto keep = [&](size_t i) { return in_window.empty() || in_window[positions[i]]; };
    auto add_kept = [&](const auto &values, auto make) {
        for (size_t i = 0; i < n; i++)
            if (keep(i)) {
                c.positions.push_back(positions[i]);
                c.values.push_back(make(values[i]));
            }
    };
    c.positions.reserve(n);
    c.values.reserve(n);
    Codec kind = static_cast<Codec>(r.byte());
    switch (kind) {
        case Codec::Tagged: {
            int64_t previous_date = 0;
            for (size_t i = 0; i < n; i++) {
                if (!keep(i)) {
                    r.skip_in_column(previous_date);
                    continue;
                }
                c.positions.push_back(positions[i]);
                c.values.push_back(r.value(previous_date, 0));
            }
            return;
        }
        case Codec::Dates: {
            std::vector<int64_t> dates;
            codec::read_dates(r, n, dates);
            add_kept(dates, [](int64_t d) { return Value::date(d); });
            return;
        }
        case Codec::Integers: {
            std::vector<int64_t> integers;
            codec::read_integers(r, n, integers);
            add_kept(integers, integer_value);
            return;
        }
        case Codec::Decimals:
        case Codec::Xor: {
            std::vector<double> doubles;
            if (kind == Codec::Decimals)
                codec::read_decimals(r, n, doubles);
            else
                codec::read_xor(r, n, doubles);
            add_kept(doubles, double_value);
            return;
        }
        case Codec::PackedDecimals: {
            codec::PackedDecimals packed = codec::read_packed_decimals(r, n);
            for (size_t i = 0; i < n; i++)
                if (keep(i)) {
                    c.positions.push_back(positions[i]);
                    c.values.push_back(double_value(packed.at(i)));
                }
            return;
        }
        case Codec::ObjectIds: {
            std::vector<ObjectId> ids;
            codec::read_objectids(r, n, ids);
            add_kept(ids, [](const ObjectId &id) { return Value::objectid(id); });
            return;
        }
    }
    corrupt("unknown column codec");
}

}  // namespace
namespace {

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

BucketData BucketData::decode(std::string_view bytes, const std::vector<std::string> *wanted,
                              const std::optional<TimeWindow> &window) {
    Body b = open_body(bytes);
    BucketData data;
    data.count_ = b.count;
    data.size_ = b.size;
    data.full_ = b.full;
    size_t densest = 0;
    // Once the window's time column is read: which measurements are in it.
    std::vector<bool> in_window;
    for (uint64_t i = 0; i < b.columns; i++) {
        ColumnHead head = next_column(b);
        std::string name(head.name);
        if (data.index_.count(name) != 0)
            corrupt("field \"" + name + "\" appears twice");
        densest = std::max(densest, static_cast<size_t>(head.n));
        bool is_wanted =
            !wanted || std::find(wanted->begin(), wanted->end(), name) != wanted->end();
        if (b.version == 1) {
            read_v1_values(b.reader, head.n, b.count, name, in_window,
                           is_wanted ? &data.column(name) : nullptr);
        } else if (is_wanted) {
            Reader block(head.block);
            std::vector<uint32_t> positions = read_positions(block, head.n, b.count, name);
            read_values(block, positions, in_window, data.column(name));
            check_end(block, name);
        }
        if (is_wanted && window && name == window->time_field) {
            const BucketColumn &c = data.column(name);
            in_window.assign(b.count, false);
            for (size_t j = 0; j < c.positions.size(); j++)
                in_window[c.positions[j]] =
                    !c.values[j].is(Value::Kind::Date) || window->contains(c.values[j].as_date());
        }
    }
    if (!b.reader.at_end())
        corrupt("trailing bytes");
    check_densest(densest, data.count_);
    return data;
}

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
        case Codec::Integers: {
            r.byte();
            std::vector<int64_t> integers;
            codec::read_integers(r, n, integers);
            for (int64_t i : integers)
                c.numbers.push_back(static_cast<double>(i));
            return;
        }
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

// Every read checks the whole bucket, so the checksum runs at memory speed
// where the CPU has the instruction.
uint32_t crc32c(std::string_view bytes) {
#if defined(__x86_64__)
    static const bool hardware = __builtin_cpu_supports("sse4.2");
    if (hardware)
        return crc32c_sse42(bytes);
#endif
    return crc32c_portable(bytes);
}

}  // namespace tscoll
