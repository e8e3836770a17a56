// The bytes of bucket data (doc/BUCKET_FORMAT.md) as the writer and the
// readers of src/core share them: value tags, column codecs, the tagged
// value writer and reader, and the checks of a bucket's header and columns.
// Internal to src/core; bucket_data.hpp is the interface.
#pragma once

#include <bson/bson.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/byte_io.hpp"
#include "core/number.hpp"
#include "core/value.hpp"

namespace tscoll::bucket_bytes {

inline constexpr char kMagic[4] = {'T', 'S', 'C', 'B'};
// Set in the format byte of a bucket closed by size.
inline constexpr uint8_t kFullFlag = 0x80;
inline constexpr size_t kMaxDepth = 200;  // well above the 100 levels a measurement may have

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

// How a version 2 column stores its values (doc/BUCKET_FORMAT.md).
enum class Codec : uint8_t {
    Tagged = 0,  // values as version 1 writes them
    Dates = 1,
    Integers = 2,
    Decimals = 3,
    Xor = 4,
    ObjectIds = 5,
    PackedDecimals = 6,
    // Before a number codec: the texts' scales where they keep digits after
    // the point that their values do not need ("3.50"), DisplayScales.
    Scaled = 7,
    PackedIntegerDeltas = 8,
    PackedDecimalDeltas = 9,
    PackedDates = 10,
    PackedObjectIds = 11,
};

// Whether the codec byte `b` is one of numbers (what Codec::Scaled precedes).
inline bool is_number_codec(uint8_t b) {
    auto c = static_cast<Codec>(b);
    return c == Codec::Integers || c == Codec::Decimals || c == Codec::Xor ||
           c == Codec::PackedDecimals || c == Codec::PackedIntegerDeltas ||
           c == Codec::PackedDecimalDeltas;
}

// The display scale (number.hpp) the reader gives a number stored as an
// integer or a double: `exact` is exact_number(text).
int64_t read_back_scale(std::string_view text, const ExactNumber &exact);
// Whether a number's text may keep more digits after the point than its
// value needs: only a text whose fraction ends in 0, or with an exponent.
bool may_keep_zeros(std::string_view text);

// A number's text as a bucket reads it back (canonical), with `scale`
// digits after the point, no fewer than it has.
std::string with_scale(const std::string &text, int64_t scale);

// Codec::Scaled's payload: the display scale of number i is its entry in
// `others`, else the larger of `common` and the one it reads back with.
struct DisplayScales {
    int64_t common = 0;
    std::vector<std::pair<uint64_t, int64_t>> others;  // (index, scale), ascending

    // The display scales of `values` (numbers, `exact` each one's integer
    // or double); nullopt when every one reads back with its own.
    static std::optional<DisplayScales> of(const std::vector<Value> &values,
                                           const std::vector<ExactNumber> &exact);
    // The same from each number's (display scale, scale it reads back with).
    static std::optional<DisplayScales> of(const std::vector<std::pair<int64_t, int64_t>> &scales);
    void write(ByteWriter &w) const;
    static DisplayScales read(ByteReader &r, uint64_t n);
    // Number `index`, read back as `v`, with its display scale.
    void apply(uint64_t index, Value &v, size_t &next_other) const;
};

class Writer : public ByteWriter {
  public:
    void value(const Value &v, int64_t &previous_date);

  private:
    void number(const Number &n);
};

class Reader : public ByteReader {
  public:
    using ByteReader::ByteReader;
    // Strings, keys and field names: UTF-8 without NUL, as jsonb holds them.
    // ASCII (most field names) passes a byte-by-byte check; libbson's, for
    // the rest, was 3% of the instructions of writing a tail again.
    std::string_view text() {
        std::string_view s = bytes(varint());
        bool ascii = std::all_of(s.begin(), s.end(), [](char c) {
            return c != '\0' && static_cast<unsigned char>(c) < 0x80;
        });
        if (!ascii && !bson_utf8_validate(s.data(), s.size(), false))
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

// A number's value as read back: integers print as integers.
Value integer_value(int64_t i);
// A number read as a double: jsonb prints -0 as 0, so float8 reads it as 0.
Value double_value(double d);

// The writers of a column's block, which BucketData::encode and the typed
// fold (bucket_fold.hpp) share, so that both write the same bytes.
// Numbers: integers, or doubles exact as their texts, as the codecs take them.
struct NumberColumn {
    std::vector<int64_t> integers;  // every number's, while all_integers
    std::vector<double> doubles;
    bool all_integers = true;
    bool all_doubles = true;  // every integer within 2^53
    void add_integer(int64_t i);
    void add_real(double d);
};
// After `scales` when there are any; false, having written nothing, when
// the numbers are neither all integers nor all doubles (tagged then).
bool write_number_column(Writer &w, const NumberColumn &numbers,
                         const std::optional<DisplayScales> &scales);
void write_date_column(Writer &w, const std::vector<int64_t> &dates);
void write_objectid_column(Writer &w, const std::vector<ObjectId> &ids);
// A sparse column's positions (none for a dense one).
void write_positions(Writer &w, const std::vector<uint32_t> &positions, uint32_t count);
struct ColumnBlock {
    std::string_view name;
    uint64_t n;  // values
    std::string block;
};
// Version 2 bucket data: the header, the columns, the checksum.
std::string write_bucket(uint32_t count, uint64_t size, bool full,
                         const std::vector<ColumnBlock> &columns);

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

Body open_body(std::string_view bytes);

// A column's name and number of values. In version 1 its positions and
// values follow in the body; in version 2 they are in `block`.
struct ColumnHead {
    std::string_view name;
    uint64_t n;
    std::string_view block;
};

ColumnHead next_column(Body &b);

// The next position of a column, after `position` (-1 before the first).
int64_t next_position(Reader &r, int64_t position, uint32_t count, std::string_view name);

std::vector<uint32_t> read_positions(Reader &r, uint64_t n, uint32_t count, std::string_view name);

void check_end(const Reader &block, std::string_view name);

// Every measurement has the time field, so some column is dense.
void check_densest(size_t densest, uint32_t count);

// The `n` integers of a column of codec `kind` (Integers or
// PackedIntegerDeltas), its codec byte read already.
void read_integer_column(Reader &r, Codec kind, uint64_t n, std::vector<int64_t> &out);

// Appends a version 2 column's values to c, leaving out the measurements
// outside the window (all are in when in_window is empty).
void read_values(Reader &r, const std::vector<uint32_t> &positions,
                 const std::vector<bool> &in_window, BucketColumn &c);

}  // namespace tscoll::bucket_bytes
