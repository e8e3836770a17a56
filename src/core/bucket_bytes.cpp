#include "core/bucket_bytes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {

namespace {

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

namespace bucket_bytes {

int64_t read_back_scale(std::string_view text, const ExactNumber &exact) {
    if (exact.integer)
        return 0;
    // The double's shortest text has the text's value, so the same digits
    // after the point once the text's trailing zeros are gone: counted in
    // place for a text without an exponent.
    if (exponent_mark(text) == std::string_view::npos) {
        size_t dot = text.find('.');
        if (dot == std::string_view::npos)
            return 0;
        size_t last = text.find_last_not_of('0');
        return last > dot ? static_cast<int64_t>(last - dot) : 0;
    }
    return display_scale(shortest_text(*exact.real));
}

bool may_keep_zeros(std::string_view text) {
    return exponent_mark(text) != std::string_view::npos ||
           (text.back() == '0' && text.find('.') != std::string_view::npos);
}

std::optional<DisplayScales> DisplayScales::of(const std::vector<Value> &values,
                                               const std::vector<ExactNumber> &exact) {
    auto differs = [&](size_t i) {
        const std::string &text = values[i].as_number().text;
        return may_keep_zeros(text) && display_scale(text) != read_back_scale(text, exact[i]);
    };
    size_t first = 0;
    while (first < values.size() && !differs(first))
        first++;
    if (first == values.size())
        return std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> scales(values.size());
    for (size_t i = 0; i < values.size(); i++) {
        const std::string &text = values[i].as_number().text;
        int64_t scale = display_scale(text);
        scales[i] = {scale, may_keep_zeros(text) ? read_back_scale(text, exact[i]) : scale};
    }
    return of(scales);
}

std::optional<DisplayScales> DisplayScales::of(
    const std::vector<std::pair<int64_t, int64_t>> &scales) {
    if (std::all_of(scales.begin(), scales.end(),
                    [](const auto &s) { return s.first == s.second; }))
        return std::nullopt;
    // The common scale that leaves the fewest others: one of those kept.
    auto others_with = [&](int64_t common) {
        size_t n = 0;
        for (const auto &[scale, back] : scales)
            n += scale != std::max(back, common);
        return n;
    };
    DisplayScales result;
    size_t fewest = others_with(0);
    for (const auto &[scale, back] : scales)
        if (scale != back && scale != result.common && others_with(scale) < fewest) {
            result.common = scale;
            fewest = others_with(scale);
        }
    for (size_t i = 0; i < scales.size(); i++)
        if (scales[i].first != std::max(scales[i].second, result.common))
            result.others.emplace_back(i, scales[i].first);
    return result;
}

void DisplayScales::write(ByteWriter &w) const {
    w.varint(static_cast<uint64_t>(common));
    w.varint(others.size());
    uint64_t previous = 0;
    for (const auto &[index, scale] : others) {
        w.varint(index - previous);
        w.varint(static_cast<uint64_t>(scale));
        previous = index;
    }
}

// Beyond numeric's own limit a scale cannot come from jsonb.
constexpr uint64_t kMaxDisplayScale = 16383;

DisplayScales DisplayScales::read(ByteReader &r, uint64_t n) {
    DisplayScales result;
    uint64_t common = r.varint();
    uint64_t count = r.varint();
    if (common > kMaxDisplayScale || count > n)
        corrupt("display scales out of range");
    result.common = static_cast<int64_t>(common);
    uint64_t index = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t gap = r.varint();
        uint64_t scale = r.varint();
        if ((i > 0 && gap == 0) || gap >= n - index || scale > kMaxDisplayScale)
            corrupt("display scales out of range");
        index += gap;
        result.others.emplace_back(index, static_cast<int64_t>(scale));
    }
    return result;
}

// with_display_scale for the texts a bucket's numbers read back as
// (canonical: no leading zeros), the zeros appended in place where the
// text has no exponent.
std::string with_scale(const std::string &text, int64_t scale) {
    if (exponent_mark(text) != std::string::npos || text == "-0")
        return with_display_scale(text, scale);
    size_t dot = text.find('.');
    int64_t has = dot == std::string::npos ? 0 : static_cast<int64_t>(text.size() - dot - 1);
    std::string scaled = text;
    if (dot == std::string::npos)
        scaled += '.';
    scaled.append(static_cast<size_t>(scale - has), '0');
    return scaled;
}

void DisplayScales::apply(uint64_t index, Value &v, size_t &next_other) const {
    if (!v.is(Value::Kind::Number))
        corrupt("display scales for a value that is not a number");
    while (next_other < others.size() && others[next_other].first < index)
        next_other++;
    const std::string &text = v.as_number().text;
    int64_t back = display_scale(text);
    int64_t scale = next_other < others.size() && others[next_other].first == index
                        ? others[next_other].second
                        : std::max(back, common);
    if (scale < back)
        corrupt("a display scale below the number's own");
    if (scale != back)
        v.as_number().text = with_scale(text, scale);  // the same value
}

void Writer::number(const Number &n) {
    ExactNumber exact = n.exact();
    // A text with zeros its value does not need ("1.0") keeps them as text.
    if ((exact.integer || exact.real) && may_keep_zeros(n.text) &&
        display_scale(n.text) != read_back_scale(n.text, exact))
        exact = ExactNumber{};
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

Value integer_value(int64_t i) {
    return Value::number(i);
}

Value double_value(double d) {
    if (!std::isfinite(d))
        corrupt("a number that is not finite");
    return Value::real(d);
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
    // read allocates by the size of the data; but packed steps take none
    // for regular times and readings, so up to the largest bucket
    // tscoll.bucket_max_count allows, whatever the size.
    constexpr uint64_t kMaxCount = 1000000;
    if (count > std::max<uint64_t>(8 * bytes.size(), kMaxCount))
        corrupt("more measurements than bits of data");
    uint64_t size = r.varint();
    uint64_t columns = r.count();
    return Body{r, version, full, static_cast<uint32_t>(count), size, columns};
}

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

int64_t next_position(Reader &r, int64_t position, uint32_t count, std::string_view name) {
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

void read_integer_column(Reader &r, Codec kind, uint64_t n, std::vector<int64_t> &out) {
    if (kind == Codec::Integers)
        codec::read_integers(r, n, out);
    else
        codec::read_packed_deltas(r, n, out);
}

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
        case Codec::Dates:
        case Codec::PackedDates: {
            std::vector<int64_t> dates;
            if (kind == Codec::Dates)
                codec::read_dates(r, n, dates);
            else
                codec::read_packed_dates(r, n, dates);
            add_kept(dates, [](int64_t d) { return Value::date(d); });
            return;
        }
        case Codec::Scaled: {
            DisplayScales scales = DisplayScales::read(r, n);
            if (!is_number_codec(r.peek()))
                corrupt("display scales before a column that is not of numbers");
            size_t start = c.values.size();
            read_values(r, positions, in_window, c);
            size_t next_other = 0;
            for (size_t i = 0, j = start; i < n; i++)
                if (keep(i))
                    scales.apply(i, c.values[j++], next_other);
            return;
        }
        case Codec::Integers:
        case Codec::PackedIntegerDeltas: {
            std::vector<int64_t> integers;
            read_integer_column(r, kind, n, integers);
            add_kept(integers, integer_value);
            return;
        }
        case Codec::PackedDecimalDeltas: {
            std::vector<double> doubles;
            codec::read_packed_decimal_deltas(r, n, doubles);
            add_kept(doubles, double_value);
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
        case Codec::ObjectIds:
        case Codec::PackedObjectIds: {
            std::vector<ObjectId> ids;
            if (kind == Codec::ObjectIds)
                codec::read_objectids(r, n, ids);
            else
                codec::read_packed_objectids(r, n, ids);
            add_kept(ids, [](const ObjectId &id) { return Value::objectid(id); });
            return;
        }
    }
    corrupt("unknown column codec");
}

}  // namespace bucket_bytes
}  // namespace tscoll
