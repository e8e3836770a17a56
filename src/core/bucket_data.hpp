// A bucket's measurements, column-wise: one column per field name, holding
// the positions of the measurements that have the field and their values in
// insertion order. The binary format is described in doc/BUCKET_FORMAT.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/value.hpp"

namespace tscoll {

struct BucketColumn {
    std::string name;
    std::vector<uint32_t> positions;  // strictly increasing
    std::vector<Value> values;        // values[i] belongs to measurement positions[i]
};

class BucketData {
  public:
    static constexpr uint8_t kFormatVersion = 1;

    uint32_t count() const { return count_; }
    // Sum of the measurements' BSON sizes (SPEC §4.1 rule 4).
    uint64_t size() const { return size_; }
    const std::vector<BucketColumn> &columns() const { return columns_; }

    // Adds a measurement (an object without the meta field).
    void append(const Value &measurement, uint64_t bson_size);
    // Every measurement rebuilt as an object, fields in column order.
    std::vector<Value> measurements() const;

    std::string encode() const;
    // Throws Error(Corrupt) on anything but a well-formed encoding.
    static BucketData decode(std::string_view bytes);
    // A read's lower time bound: the measurements whose `time_field` is
    // before `since` are not wanted.
    struct TimeWindow {
        std::string time_field;
        UnixMicros since;
    };
    // How decoded numbers are built. Float8: integers and doubles that are
    // a field's value carry their float8 only, with an empty text, for
    // readers that compute with float8 alone (aggregation in buckets);
    // decimals, and numbers inside objects and arrays, keep their text.
    enum class Numbers { Exact, Float8 };
    // Builds only the columns named in `wanted` (nullptr: all), for reads
    // that use a few fields. With a window, columns after the time column
    // leave out the measurements before it.
    static BucketData decode(std::string_view bytes, const std::vector<std::string> *wanted,
                             const std::optional<TimeWindow> &window = std::nullopt,
                             Numbers numbers = Numbers::Exact);

  private:
    BucketColumn &column(const std::string &name);

    uint32_t count_ = 0;
    uint64_t size_ = 0;
    std::vector<BucketColumn> columns_;
    std::unordered_map<std::string, size_t> index_;
};

uint32_t crc32c(std::string_view bytes);

}  // namespace tscoll
