#include "core/bucket_data.hpp"

#include <bson/bson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {

namespace {

constexpr char kMagic[4] = {'T', 'S', 'C', 'B'};
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

uint64_t zigzag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t unzigzag(uint64_t v) {
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

class Writer {
  public:
    void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            byte(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        byte(static_cast<uint8_t>(v));
    }
    void bytes(std::string_view s) { out_.append(s); }
    void text(std::string_view s) {
        varint(s.size());
        bytes(s);
    }
    void value(const Value &v, int64_t &previous_date);
    std::string take() { return std::move(out_); }
    const std::string &buffer() const { return out_; }

  private:
    void number(const Number &n);
    std::string out_;
};

void Writer::number(const Number &n) {
    if (std::optional<int64_t> i = exact_int64(n.text)) {
        byte(kInteger);
        varint(zigzag(*i));
    } else if (std::optional<double> d = exact_double(n.text)) {
        byte(kDouble);
        char raw[8];
        std::memcpy(raw, &*d, 8);  // the machine is little-endian (checked in decode)
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

[[noreturn]] void corrupt(const std::string &what) {
    throw Error(ErrorCode::Corrupt, "bucket data is corrupt: " + what);
}

class Reader {
  public:
    explicit Reader(std::string_view in) : in_(in) {}
    uint8_t byte() {
        if (pos_ >= in_.size())
            corrupt("unexpected end of data");
        return static_cast<uint8_t>(in_[pos_++]);
    }
    uint8_t peek() const {
        if (pos_ >= in_.size())
            corrupt("unexpected end of data");
        return static_cast<uint8_t>(in_[pos_]);
    }
    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            uint8_t b = byte();
            v |= static_cast<uint64_t>(b & 0x7f) << shift;
            if ((b & 0x80) == 0)
                return v;
        }
        corrupt("varint too long");
    }
    std::string_view bytes(uint64_t n) {
        if (n > in_.size() - pos_)
            corrupt("length beyond the end of data");
        std::string_view s = in_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    // Strings, keys and field names: UTF-8 without NUL, as jsonb holds them.
    std::string_view text() {
        std::string_view s = bytes(varint());
        if (!bson_utf8_validate(s.data(), s.size(), false))
            corrupt("text that is not UTF-8");
        return s;
    }
    // A count of items, each at least one byte long.
    uint64_t count() {
        uint64_t n = varint();
        if (n > in_.size() - pos_)
            corrupt("count beyond the end of data");
        return n;
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
    bool at_end() const { return pos_ == in_.size(); }

  private:
    std::string_view in_;
    size_t pos_ = 0;
};

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
            int64_t i = unzigzag(varint());
            return Value::number(std::to_string(i), static_cast<double>(i));
        }
        case kDouble: {
            double d;
            std::memcpy(&d, bytes(8).data(), 8);
            if (!std::isfinite(d))
                corrupt("a number that is not finite");
            // jsonb prints -0 as 0, so float8 reads it as 0.
            return Value::number(shortest_text(d), d == 0 ? 0.0 : d);
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
    for (const Member &m : measurement.as_object()) {
        BucketColumn &c = column(m.key);
        // A key repeated within one measurement keeps its first value, as jsonb does not
        // allow repeats; the guard keeps positions strictly increasing regardless.
        if (!c.positions.empty() && c.positions.back() == count_)
            continue;
        c.positions.push_back(count_);
        c.values.push_back(m.value);
    }
    count_++;
    size_ += bson_size;
}

std::vector<Value> BucketData::measurements() const {
    std::vector<Value> out(count_, Value::object());
    for (const BucketColumn &c : columns_)
        for (size_t i = 0; i < c.positions.size(); i++)
            out[c.positions[i]].add(c.name, c.values[i]);
    return out;
}

std::string BucketData::encode() const {
    Writer w;
    w.bytes(std::string_view(kMagic, sizeof kMagic));
    w.byte(kFormatVersion);
    w.varint(count_);
    w.varint(size_);
    w.varint(columns_.size());
    for (const BucketColumn &c : columns_) {
        w.text(c.name);
        w.varint(c.positions.size());
        int64_t previous_position = -1;
        int64_t previous_date = 0;
        for (size_t i = 0; i < c.positions.size(); i++) {
            w.varint(static_cast<uint64_t>(c.positions[i] - previous_position - 1));
            previous_position = c.positions[i];
            w.value(c.values[i], previous_date);
        }
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
    if (uint8_t version = r.byte(); version != BucketData::kFormatVersion)
        corrupt("unknown format version " + std::to_string(version));
    uint64_t count = r.varint();
    if (count > UINT32_MAX)
        corrupt("count out of range");
    uint64_t size = r.varint();
    uint64_t columns = r.count();
    return Body{r, static_cast<uint32_t>(count), size, columns};
}

// The next position of a column, after `position` (-1 before the first).
int64_t next_position(Reader &r, int64_t position, uint32_t count, const std::string_view name) {
    uint64_t gap = r.varint();
    if (gap >= count || position + 1 + static_cast<int64_t>(gap) >= static_cast<int64_t>(count))
        corrupt("position out of range in field \"" + std::string(name) + "\"");
    return position + 1 + static_cast<int64_t>(gap);
}

void check_densest(size_t densest, uint32_t count) {
    // Every measurement has the time field, so some column is dense; this
    // also bounds what measurements() allocates by the size of the data.
    if (densest != count)
        corrupt("no field is present in all " + std::to_string(count) + " measurements");
}

}  // namespace

BucketData BucketData::decode(std::string_view bytes, const std::vector<std::string> *wanted,
                              const std::optional<TimeWindow> &window) {
    Body b = open_body(bytes);
    Reader &r = b.reader;
    BucketData data;
    data.count_ = b.count;
    data.size_ = b.size;
    uint64_t count = b.count;
    uint64_t columns = b.columns;
    size_t densest = 0;
    // Once the window's time column is read: which measurements are in it.
    std::vector<bool> in_window;
    for (uint64_t i = 0; i < columns; i++) {
        std::string name(r.text());
        if (data.index_.count(name) != 0)
            corrupt("field \"" + name + "\" appears twice");
        uint64_t n = r.count();
        if (wanted && std::find(wanted->begin(), wanted->end(), name) == wanted->end()) {
            for (uint64_t j = 0; j < n; j++) {
                r.varint();
                r.skip(0);
            }
            densest = std::max(densest, static_cast<size_t>(n));
            continue;
        }
        BucketColumn &c = data.column(name);
        c.positions.reserve(n);
        c.values.reserve(n);
        int64_t position = -1;
        int64_t previous_date = 0;
        for (uint64_t j = 0; j < n; j++) {
            position = next_position(r, position, b.count, name);
            if (!in_window.empty() && !in_window[position]) {
                r.skip_in_column(previous_date);
                continue;
            }
            c.positions.push_back(static_cast<uint32_t>(position));
            c.values.push_back(r.value(previous_date, 0));
        }
        densest = std::max(densest, static_cast<size_t>(n));
        if (window && name == window->time_field) {
            in_window.assign(count, false);
            for (size_t j = 0; j < c.positions.size(); j++)
                in_window[c.positions[j]] =
                    !c.values[j].is(Value::Kind::Date) || c.values[j].as_date() >= window->since;
        }
    }
    if (!r.at_end())
        corrupt("trailing bytes");
    check_densest(densest, data.count_);
    return data;
}

namespace {

// One entry of a Float8Column.
void read_float8(Reader &r, Float8Column &c, int64_t &previous_date) {
    uint8_t tag = r.peek();
    if (tag == kDouble) {
        r.byte();
        double d;
        std::memcpy(&d, r.bytes(8).data(), 8);
        if (!std::isfinite(d))
            corrupt("a number that is not finite");
        c.numbers.push_back(d == 0 ? 0.0 : d);  // as Reader::value: -0 reads as 0
    } else if (tag == kInteger) {
        r.byte();
        c.numbers.push_back(static_cast<double>(unzigzag(r.varint())));
    } else {
        c.others.emplace_back(static_cast<uint32_t>(c.numbers.size()), r.value(previous_date, 0));
        c.numbers.push_back(0);
    }
}

}  // namespace

Float8Cursor::Entry Float8Cursor::at(uint32_t position) {
    const std::vector<uint32_t> &positions = column_->positions;
    while (next_ < positions.size() && positions[next_] < position)
        next_++;
    if (next_ >= positions.size() || positions[next_] != position)
        return Entry{};
    const auto &others = column_->others;
    while (other_ < others.size() && others[other_].first < next_)
        other_++;
    if (other_ < others.size() && others[other_].first == next_)
        return Entry{true, &others[other_].second, 0};
    return Entry{true, nullptr, column_->numbers[next_]};
}

Float8Columns BucketData::decode_float8(std::string_view bytes, const std::string &time_field,
                                        const std::vector<std::string> &fields) {
    Body b = open_body(bytes);
    Reader &r = b.reader;
    Float8Columns result;
    result.fields.resize(fields.size());
    std::unordered_set<std::string_view> seen;
    size_t densest = 0;
    bool has_time = false;
    for (uint64_t i = 0; i < b.columns; i++) {
        std::string_view name = r.text();
        if (!seen.insert(name).second)
            corrupt("field \"" + std::string(name) + "\" appears twice");
        uint64_t n = r.count();
        densest = std::max(densest, static_cast<size_t>(n));
        auto field = std::find(fields.begin(), fields.end(), name);
        bool is_time = name == time_field;
        if (is_time) {
            if (n != b.count)
                corrupt("a measurement has no time");
            result.times.resize(n);
            has_time = true;
        }
        Float8Column *column =
            field != fields.end() ? &result.fields[field - fields.begin()] : nullptr;
        int64_t position = -1;
        int64_t previous_date = 0;
        for (uint64_t j = 0; j < n; j++) {
            position = next_position(r, position, b.count, name);
            if (is_time) {
                Value t = r.value(previous_date, 0);
                if (!t.is(Value::Kind::Date))
                    corrupt("a measurement has no time");
                result.times[position] = t.as_date();
            } else if (column != nullptr) {
                column->positions.push_back(static_cast<uint32_t>(position));
                read_float8(r, *column, previous_date);
            } else {
                r.skip(0);
            }
        }
    }
    if (!r.at_end())
        corrupt("trailing bytes");
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
