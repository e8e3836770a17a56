#include "core/column_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tscoll::codec {

namespace {

// Each value of these codecs takes at least a byte, which bounds what a
// reader allocates by the size of its input.
void check_items(const ByteReader &r, uint64_t n) {
    if (n > r.remaining())
        corrupt("count beyond the end of data");
}

template <typename T>
void reserve_more(std::vector<T> &out, uint64_t n) {
    out.reserve(out.size() + n);
}

// Where n more values of `out` are to be written.
template <typename T>
T *grown(std::vector<T> &out, uint64_t n) {
    size_t at = out.size();
    out.resize(at + n);
    return out.data() + at;
}

}  // namespace

void write_dates(ByteWriter &w, const std::vector<int64_t> &dates) {
    int64_t previous = 0;
    int64_t previous_delta = 0;
    for (int64_t date : dates) {
        int64_t delta = wrapping_sub(date, previous);
        w.varint(zigzag(wrapping_sub(delta, previous_delta)));
        previous = date;
        previous_delta = delta;
    }
}

void read_dates(ByteReader &r, uint64_t n, std::vector<int64_t> &out) {
    check_items(r, n);
    int64_t *to = grown(out, n);
    int64_t previous = 0;
    int64_t delta = 0;
    r.varints(n, [&](uint64_t v) {
        delta = wrapping_add(delta, unzigzag(v));
        previous = wrapping_add(previous, delta);
        *to++ = previous;
    });
}

void write_integers(ByteWriter &w, const std::vector<int64_t> &integers) {
    int64_t previous = 0;
    for (int64_t i : integers) {
        w.varint(zigzag(wrapping_sub(i, previous)));
        previous = i;
    }
}

void read_integers(ByteReader &r, uint64_t n, std::vector<int64_t> &out) {
    check_items(r, n);
    int64_t *to = grown(out, n);
    int64_t previous = 0;
    r.varints(n, [&](uint64_t v) {
        previous = wrapping_add(previous, unzigzag(v));
        *to++ = previous;
    });
}

namespace {

constexpr uint8_t kMaxScale = 18;
constexpr double kPowersOfTen[kMaxScale + 1] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,
                                                1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
                                                1e14, 1e15, 1e16, 1e17, 1e18};

std::optional<int64_t> scaled(double d, uint8_t scale) {
    double k = std::nearbyint(d * kPowersOfTen[scale]);
    // k exact, so k / 10^scale is one correctly rounded division of exact operands.
    if (!(std::fabs(k) <= kMaxExactInteger))
        return std::nullopt;
    double back = k / kPowersOfTen[scale];
    // Bit for bit: -0 is not 0 here.
    if (back != d || std::signbit(back) != std::signbit(d))
        return std::nullopt;
    return static_cast<int64_t>(k);
}

}  // namespace

double power_of_ten(uint8_t scale) {
    return kPowersOfTen[scale];
}

std::optional<DecimalKs> decimal_ks(const std::vector<double> &doubles) {
    uint8_t scale = 0;
    for (double d : doubles)
        while (!scaled(d, scale))
            if (++scale > kMaxScale)
                return std::nullopt;
    // A larger scale suits every value a smaller one did, but check it.
    DecimalKs out{scale, {}};
    out.ks.reserve(doubles.size());
    for (double d : doubles) {
        std::optional<int64_t> k = scaled(d, scale);
        if (!k)
            return std::nullopt;
        out.ks.push_back(*k);
    }
    return out;
}

void write_decimals(ByteWriter &w, const DecimalKs &decimals) {
    w.byte(decimals.scale);
    int64_t previous = 0;
    for (int64_t k : decimals.ks) {
        w.varint(zigzag(k - previous));
        previous = k;
    }
}

void read_decimals(ByteReader &r, uint64_t n, std::vector<double> &out) {
    uint8_t scale = r.byte();
    if (scale > kMaxScale)
        corrupt("decimal scale " + std::to_string(scale));
    check_items(r, n);
    double *to = grown(out, n);
    double divisor = kPowersOfTen[scale];
    int64_t k = 0;
    r.varints(n, [&](uint64_t v) {
        k = wrapping_add(k, unzigzag(v));
        *to++ = static_cast<double>(k) / divisor;
    });
}

namespace {

constexpr unsigned kMaxPackedWidth = 55;  // |k| <= 2^53, so k - least <= 2^54

}  // namespace

namespace {

unsigned bit_width(uint64_t v) {
    return v == 0 ? 0 : 64 - static_cast<unsigned>(__builtin_clzll(v));
}

struct Frame {
    int64_t base = 0;
    unsigned width = 0;
};

Frame frame_of(const std::vector<int64_t> &ks) {
    if (ks.empty())
        return {};
    auto [least, most] = std::minmax_element(ks.begin(), ks.end());
    return {*least, bit_width(static_cast<uint64_t>(*most - *least))};
}

}  // namespace

size_t packed_frame_size(const std::vector<int64_t> &ks) {
    Frame frame = frame_of(ks);
    return varint_size(zigzag(frame.base)) + 1 + (ks.size() * frame.width + 7) / 8;
}

void write_packed_decimals(ByteWriter &w, const DecimalKs &decimals) {
    const std::vector<int64_t> &ks = decimals.ks;
    Frame frame = frame_of(ks);
    w.byte(decimals.scale);
    w.varint(zigzag(frame.base));
    w.byte(static_cast<uint8_t>(frame.width));
    // Offsets of at most 55 bits, gathered in a word and written a byte
    // at a time, least significant bit first.
    std::string bits;
    bits.reserve((ks.size() * frame.width + 7) / 8);
    unsigned __int128 pending = 0;
    unsigned filled = 0;
    for (int64_t k : ks) {
        pending |= static_cast<unsigned __int128>(static_cast<uint64_t>(k - frame.base)) << filled;
        for (filled += frame.width; filled >= 8; filled -= 8, pending >>= 8)
            bits.push_back(static_cast<char>(static_cast<uint8_t>(pending)));
    }
    if (filled > 0)
        bits.push_back(static_cast<char>(static_cast<uint8_t>(pending)));
    w.bytes(bits);
}

PackedDecimals read_packed_decimals(ByteReader &r, uint64_t n) {
    PackedDecimals p;
    uint8_t scale = r.byte();
    if (scale > kMaxScale)
        corrupt("decimal scale " + std::to_string(scale));
    int64_t base = unzigzag(r.varint());
    unsigned width = r.byte();
    if (width > kMaxPackedWidth || !(std::fabs(static_cast<double>(base)) <= kMaxExactInteger))
        corrupt("packed decimals out of range");
    std::string_view bits = r.bytes((n * width + 7) / 8);
    p.bits_.reserve(bits.size() + sizeof(uint64_t));
    p.bits_.append(bits).append(sizeof(uint64_t), '\0');
    p.size_ = n;
    p.base_ = base;
    p.mask_ = (uint64_t{1} << width) - 1;
    p.width_ = width;
    p.divisor_ = kPowersOfTen[scale];
    return p;
}

size_t varint_deltas_size(const std::vector<int64_t> &ks) {
    size_t size = 0;
    int64_t previous = 0;
    for (int64_t k : ks) {
        size += varint_size(zigzag(wrapping_sub(k, previous)));
        previous = k;
    }
    return size;
}

namespace {

std::vector<int64_t> deltas_of(const std::vector<int64_t> &dates) {
    std::vector<int64_t> deltas;
    deltas.reserve(dates.size());
    for (size_t i = 1; i < dates.size(); i++)
        deltas.push_back(wrapping_sub(dates[i], dates[i - 1]));
    return deltas;
}

}  // namespace

size_t dates_size(const std::vector<int64_t> &dates) {
    size_t size = 0;
    int64_t previous = 0, previous_delta = 0;
    for (int64_t date : dates) {
        int64_t delta = wrapping_sub(date, previous);
        size += varint_size(zigzag(wrapping_sub(delta, previous_delta)));
        previous = date;
        previous_delta = delta;
    }
    return size;
}

std::optional<std::string> packed_dates(const std::vector<int64_t> &dates) {
    if (dates.size() < 2)
        return std::nullopt;
    std::optional<std::string> deltas = packed_steps(deltas_of(dates));
    if (!deltas)
        return std::nullopt;
    ByteWriter w;
    w.varint(zigzag(dates[0]));
    w.bytes(*deltas);
    return w.take();
}

void read_packed_dates(ByteReader &r, uint64_t n, std::vector<int64_t> &out) {
    if (n < 2)
        corrupt("packed dates of fewer than two");
    int64_t date = unzigzag(r.varint());
    std::vector<int64_t> deltas;
    read_packed_deltas(r, n - 1, deltas);
    int64_t *to = grown(out, n);
    *to++ = date;
    for (int64_t delta : deltas)
        *to++ = date = wrapping_add(date, delta);
}

void read_packed_decimal_deltas(ByteReader &r, uint64_t n, std::vector<double> &out) {
    uint8_t scale = r.byte();
    if (scale > kMaxScale)
        corrupt("decimal scale " + std::to_string(scale));
    std::vector<int64_t> ks;
    read_packed_deltas(r, n, ks);
    double divisor = kPowersOfTen[scale];
    double *to = grown(out, n);
    for (int64_t k : ks) {
        double d = static_cast<double>(k);
        if (!(std::fabs(d) <= kMaxExactInteger))
            corrupt("packed decimal deltas out of range");
        *to++ = d / divisor;
    }
}

namespace {

class BitWriter {
  public:
    // The low `bits` bits of v, most significant first.
    void put(uint64_t v, unsigned bits) {
        while (bits > 0) {
            unsigned take = std::min(bits, 8 - used_);
            bits -= take;
            uint8_t chunk = static_cast<uint8_t>((v >> bits) & ((1u << take) - 1));
            current_ = static_cast<uint8_t>(current_ << take | chunk);
            used_ += take;
            if (used_ == 8) {
                out_.push_back(static_cast<char>(current_));
                current_ = 0;
                used_ = 0;
            }
        }
    }
    std::string finish() {
        if (used_ > 0)
            out_.push_back(static_cast<char>(current_ << (8 - used_)));
        return std::move(out_);
    }

  private:
    std::string out_;
    uint8_t current_ = 0;
    unsigned used_ = 0;
};

class BitReader {
  public:
    explicit BitReader(std::string_view in) : in_(in) {}
    uint64_t get(unsigned bits) {
        if (bits > bits_left())
            corrupt("bits beyond the end of data");
        uint64_t v = 0;
        while (bits > 0) {
            unsigned offset = static_cast<unsigned>(position_ % 8);
            unsigned take = std::min(bits, 8 - offset);
            uint8_t byte = static_cast<uint8_t>(in_[position_ / 8]);
            v = v << take | ((byte >> (8 - offset - take)) & ((1u << take) - 1));
            bits -= take;
            position_ += take;
        }
        return v;
    }
    uint64_t bits_left() const { return in_.size() * 8 - position_; }

  private:
    std::string_view in_;
    uint64_t position_ = 0;
};

uint64_t bits_of(double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    return b;
}

double double_of(uint64_t b) {
    double d;
    std::memcpy(&d, &b, 8);
    return d;
}

}  // namespace

// Per value after the first: 0 when equal to the previous; 10 and the
// meaningful bits when they fit the previous window; 11, 5 bits of leading
// zeros, 6 bits of length - 1, and the meaningful bits otherwise.
void write_xor(ByteWriter &w, const std::vector<double> &doubles) {
    BitWriter bits;
    uint64_t previous = 0;
    unsigned leading = 65;  // no window yet
    unsigned trailing = 0;
    for (size_t i = 0; i < doubles.size(); i++) {
        uint64_t b = bits_of(doubles[i]);
        if (i == 0) {
            bits.put(b, 64);
            previous = b;
            continue;
        }
        uint64_t x = b ^ previous;
        previous = b;
        if (x == 0) {
            bits.put(0, 1);
            continue;
        }
        unsigned lead = std::min(31u, static_cast<unsigned>(__builtin_clzll(x)));
        unsigned trail = static_cast<unsigned>(__builtin_ctzll(x));
        if (leading <= 64 && lead >= leading && trail >= trailing) {
            bits.put(0b10, 2);
            bits.put(x >> trailing, 64 - leading - trailing);
            continue;
        }
        leading = lead;
        trailing = trail;
        unsigned length = 64 - lead - trail;
        bits.put(0b11, 2);
        bits.put(lead, 5);
        bits.put(length - 1, 6);
        bits.put(x >> trail, length);
    }
    w.text(bits.finish());
}

void read_xor(ByteReader &r, uint64_t n, std::vector<double> &out) {
    BitReader bits(r.bytes(r.varint()));
    // Every value after the first takes at least a bit.
    if (n > 0 && n - 1 > bits.bits_left())
        corrupt("count beyond the end of data");
    reserve_more(out, n);
    uint64_t previous = 0;
    unsigned leading = 65;
    unsigned trailing = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (i == 0) {
            previous = bits.get(64);
        } else if (bits.get(1) == 1) {
            if (bits.get(1) == 1) {
                leading = static_cast<unsigned>(bits.get(5));
                unsigned length = static_cast<unsigned>(bits.get(6)) + 1;
                if (leading + length > 64)
                    corrupt("XOR window beyond 64 bits");
                trailing = 64 - leading - length;
            } else if (leading > 64) {
                corrupt("XOR window used before it is set");
            }
            previous ^= bits.get(64 - leading - trailing) << trailing;
        }
        out.push_back(double_of(previous));
    }
    if (bits.bits_left() >= 8)
        corrupt("trailing bytes");
}

namespace {

constexpr size_t kMiddle = 5;  // bytes 4..8: per process

uint64_t big_endian(const ObjectId &id, size_t from, size_t length) {
    uint64_t v = 0;
    for (size_t i = from; i < from + length; i++)
        v = v << 8 | id.bytes[i];
    return v;
}

void put_big_endian(ObjectId &id, size_t from, size_t length, uint64_t v) {
    for (size_t i = from + length; i > from; i--, v >>= 8)
        id.bytes[i - 1] = static_cast<uint8_t>(v);
}

}  // namespace

// Per id: zigzag(seconds delta) * 2 + whether the middle changed, the
// middle if it did, zigzag(counter delta).
void write_objectids(ByteWriter &w, const std::vector<ObjectId> &ids) {
    ObjectId previous;
    for (const ObjectId &id : ids) {
        int64_t seconds = static_cast<int64_t>(big_endian(id, 0, 4)) -
                          static_cast<int64_t>(big_endian(previous, 0, 4));
        bool new_middle = std::memcmp(id.bytes.data() + 4, previous.bytes.data() + 4, kMiddle) != 0;
        w.varint(zigzag(seconds) << 1 | (new_middle ? 1 : 0));
        if (new_middle)
            w.bytes(std::string_view(reinterpret_cast<const char *>(id.bytes.data() + 4), kMiddle));
        w.varint(zigzag(static_cast<int64_t>(big_endian(id, 9, 3)) -
                        static_cast<int64_t>(big_endian(previous, 9, 3))));
        previous = id;
    }
}

void read_objectids(ByteReader &r, uint64_t n, std::vector<ObjectId> &out) {
    check_items(r, n);
    reserve_more(out, n);
    ObjectId id;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t head = r.varint();
        int64_t seconds =
            wrapping_add(static_cast<int64_t>(big_endian(id, 0, 4)), unzigzag(head >> 1));
        if (seconds < 0 || seconds > UINT32_MAX)
            corrupt("ObjectId time out of range");
        put_big_endian(id, 0, 4, static_cast<uint64_t>(seconds));
        if (head & 1)
            std::memcpy(id.bytes.data() + 4, r.bytes(kMiddle).data(), kMiddle);
        int64_t counter =
            wrapping_add(static_cast<int64_t>(big_endian(id, 9, 3)), unzigzag(r.varint()));
        if (counter < 0 || counter > 0xFFFFFF)
            corrupt("ObjectId counter out of range");
        put_big_endian(id, 9, 3, static_cast<uint64_t>(counter));
        out.push_back(id);
    }
}

namespace {

bool one_middle(const std::vector<ObjectId> &ids) {
    return std::all_of(ids.begin(), ids.end(), [&](const ObjectId &id) {
        return std::memcmp(id.bytes.data() + 4, ids[0].bytes.data() + 4, kMiddle) == 0;
    });
}

// Bytes `from`..`from + length` of each id, as integers.
std::vector<int64_t> id_parts(const std::vector<ObjectId> &ids, size_t from, size_t length) {
    std::vector<int64_t> parts;
    parts.reserve(ids.size());
    for (const ObjectId &id : ids)
        parts.push_back(static_cast<int64_t>(big_endian(id, from, length)));
    return parts;
}

}  // namespace

std::optional<std::string> packed_objectids(const std::vector<ObjectId> &ids) {
    if (ids.empty() || !one_middle(ids))
        return std::nullopt;
    ByteWriter w;
    w.bytes(std::string_view(reinterpret_cast<const char *>(ids[0].bytes.data() + 4), kMiddle));
    w.bytes(*packed_steps(id_parts(ids, 0, 4)));
    w.bytes(*packed_steps(id_parts(ids, 9, 3)));
    return w.take();
}

void read_packed_objectids(ByteReader &r, uint64_t n, std::vector<ObjectId> &out) {
    ObjectId id;
    std::memcpy(id.bytes.data() + 4, r.bytes(kMiddle).data(), kMiddle);
    std::vector<int64_t> seconds, counters;
    read_packed_deltas(r, n, seconds);
    read_packed_deltas(r, n, counters);
    reserve_more(out, n);
    for (uint64_t i = 0; i < n; i++) {
        if (seconds[i] < 0 || seconds[i] > UINT32_MAX || counters[i] < 0 || counters[i] > 0xFFFFFF)
            corrupt("ObjectId out of range");
        put_big_endian(id, 0, 4, static_cast<uint64_t>(seconds[i]));
        put_big_endian(id, 9, 3, static_cast<uint64_t>(counters[i]));
        out.push_back(id);
    }
}

}  // namespace tscoll::codec
