// A bucket's measurements, column-wise: one column per field name, holding
// the positions of the measurements that have the field and their values in
// insertion order. The binary format is described in doc/BUCKET_FORMAT.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/column_codec.hpp"
#include "core/value.hpp"

namespace tscoll {

struct BucketColumn {
    std::string name;
    std::vector<uint32_t> positions;  // strictly increasing
    std::vector<Value> values;        // values[i] belongs to measurement positions[i]
};

// A column read for float8 arithmetic (aggregation in buckets): integers
// and doubles as their double, any other value kept whole for the reader to
// cast as float8 casts its text.
struct Float8Column {
    bool dense = false;               // every measurement has the field: positions left empty
    std::vector<uint32_t> positions;  // strictly increasing
    std::vector<double> numbers;      // numbers[i] belongs to positions[i], unless in others
    std::vector<std::pair<uint32_t, Value>> others;  // (index into positions, value), ascending
    // In place of numbers, for packed decimals: decoded only when read.
    std::optional<codec::PackedDecimals> packed;

    size_t size() const { return packed ? packed->size() : numbers.size(); }
    double number(size_t i) const { return packed ? packed->at(i) : numbers[i]; }
};

// Walks a Float8Column by ascending measurement position.
class Float8Cursor {
  public:
    explicit Float8Cursor(const Float8Column &column)
        : column_(&column),
          dense_(column.dense || (!column.positions.empty() &&
                                  column.positions.back() + size_t{1} == column.positions.size())),
          numbers_only_(dense_ && column.others.empty()) {}
    struct Entry {
        bool present = false;          // whether the measurement has the field
        const Value *other = nullptr;  // its value when not a number read as double
        double number = 0;
    };
    // Positions must not decrease from one call to the next. Inline for
    // the common column, a number for every measurement: the Entry then
    // stays in registers.
    Entry at(uint32_t position) {
        if (numbers_only_ && position < column_->size())
            return Entry{true, nullptr, column_->number(position)};
        return find(position);
    }

  private:
    Entry find(uint32_t position);

    const Float8Column *column_;
    bool dense_;         // positions are 0, 1, 2 ...: index and position are one
    bool numbers_only_;  // dense, and every value a number
    size_t next_ = 0;    // into positions
    size_t other_ = 0;   // into others
};

// The times of a bucket's measurements and a few of its fields as float8.
struct Float8Columns {
    std::vector<UnixMicros> times;     // one per measurement
    std::vector<Float8Column> fields;  // as asked; empty for a field no measurement has
};

// What a bucket's state (BucketState) needs of stored data, read without
// building most of its values: the header, and each field with the values
// that tell its schema. That is all of them for a column of tagged values,
// and one standing for them all where the column's codec holds values of
// one kind (numbers, dates, ObjectIds): their type class is the codec's.
struct BucketOutline {
    uint32_t count = 0;
    uint64_t size = 0;
    bool full = false;
    std::vector<std::pair<std::string, std::vector<Value>>> fields;
};

class BucketData {
  public:
    // What encode() writes; decode() reads versions 1 and 2.
    static constexpr uint8_t kFormatVersion = 2;

    uint32_t count() const { return count_; }
    // Sum of the measurements' BSON sizes, which the bucket size limit reads.
    uint64_t size() const { return size_; }
    const std::vector<BucketColumn> &columns() const { return columns_; }
    // Closed by size (doc/REFERENCE.md, Bucketing): full, never reopened, also after
    // the statement that closed it.
    bool full() const { return full_; }
    void mark_full() { full_ = true; }

    // Adds a measurement (an object without the meta field).
    void append(const Value &measurement, uint64_t bson_size);
    // The same, taking its values.
    void append(Value &&measurement, uint64_t bson_size);
    // Adds `more`'s measurements after these, as if appended one by one.
    void append(const BucketData &more);
    // The same, taking `more`'s values.
    void append(BucketData &&more);
    // Every measurement rebuilt as an object, fields in column order.
    std::vector<Value> measurements() const;
    // Room for about `measurements` in each column the first measurement
    // brings (one that comes later is most likely sparse): a column grown
    // by doubling moves every value it holds a few times over.
    void reserve(uint32_t measurements) { expected_ = measurements; }

    std::string encode() const;
    // Throws Error(Corrupt) on anything but a well-formed encoding.
    static BucketData decode(std::string_view bytes);
    // A read's time bounds: the measurements whose `time_field` is not
    // within them are not wanted, nor, when `rows` is given, those at a
    // position where it is false (their time is still read).
    struct TimeWindow {
        std::string time_field;
        std::function<bool(UnixMicros)> contains;
        const std::vector<bool> *rows = nullptr;
    };
    // Builds only the columns named in `wanted` (nullptr: all), for reads
    // that use a few fields. With a window, the other columns leave out the
    // measurements outside it (those before the time column, the rows left
    // out by `rows` only).
    static BucketData decode(std::string_view bytes, const std::vector<std::string> *wanted,
                             const std::optional<TimeWindow> &window = std::nullopt);

    // The outline of stored data, with the checks of decode but on the
    // values of typed columns (CRC32C vouches for those).
    static BucketOutline outline(std::string_view bytes);

    // Reads only the time column and `fields`, without building values for
    // numbers; the same checks as decode.
    static Float8Columns decode_float8(std::string_view bytes, const std::string &time_field,
                                       const std::vector<std::string> &fields);

  private:
    BucketColumn &column(const std::string &name);

    uint32_t count_ = 0;
    uint64_t size_ = 0;
    bool full_ = false;
    uint32_t expected_ = 0;
    std::vector<BucketColumn> columns_;
    std::unordered_map<std::string, size_t> index_;
};

uint32_t crc32c(std::string_view bytes);

}  // namespace tscoll
