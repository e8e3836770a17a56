// Typed codecs for the columns of a version 2 bucket (doc/ARCHITECTURE.md,
// The bucket data format; doc/BUCKET_FORMAT.md). Each writes a column of
// one kind of value and reads it back exactly; readers append to `out` and
// raise Error(Corrupt) on bytes a writer cannot have produced, without
// reading past their input.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_io.hpp"
#include "core/objectid.hpp"
#include "core/packed_steps.hpp"

namespace tscoll::codec {

// Integers up to 2^53 are exact as doubles.
constexpr double kMaxExactInteger = 9007199254740992.0;

// Times: the first, then delta-of-delta, as zigzag varints. Regular
// intervals cost one byte a measurement.
void write_dates(ByteWriter &w, const std::vector<int64_t> &dates);
void read_dates(ByteReader &r, uint64_t n, std::vector<int64_t> &out);

// Times as packed steps of their deltas: readings at a regular interval
// take no bits. The bytes, or nullopt when fewer than two or the deltas'
// steps do not pack.
std::optional<std::string> packed_dates(const std::vector<int64_t> &dates);
size_t dates_size(const std::vector<int64_t> &dates);  // of write_dates
void read_packed_dates(ByteReader &r, uint64_t n, std::vector<int64_t> &out);

// Integers: deltas as zigzag varints.
void write_integers(ByteWriter &w, const std::vector<int64_t> &integers);
void read_integers(ByteReader &r, uint64_t n, std::vector<int64_t> &out);

// Doubles that are all k / 10^scale for integers k (readings kept to a few
// decimals): the scale, then the deltas of k as zigzag varints. The
// smallest such scale, if any, with each value's k.
struct DecimalKs {
    uint8_t scale = 0;
    std::vector<int64_t> ks;
};
std::optional<DecimalKs> decimal_ks(const std::vector<double> &doubles);
// 10^scale, scale at most 18 (the largest decimal scale).
double power_of_ten(uint8_t scale);
void write_decimals(ByteWriter &w, const DecimalKs &decimals);
void read_decimals(ByteReader &r, uint64_t n, std::vector<double> &out);

// The same doubles as frame of reference: the least k, then each k minus it
// in a fixed number of bits, least significant first. Any one of them reads
// without the others, so a reader that keeps a few rows decodes only those.
// Written in place of the deltas when no larger.
class PackedDecimals {
  public:
    size_t size() const { return size_; }
    double at(size_t i) const {
        uint64_t bit = i * width_;
        uint64_t word;
        std::memcpy(&word, bits_.data() + bit / 8, sizeof word);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        uint64_t offset = (word >> (bit % 8)) & mask_;
        return static_cast<double>(base_ + static_cast<int64_t>(offset)) / divisor_;
    }

  private:
    friend PackedDecimals read_packed_decimals(ByteReader &r, uint64_t n);
    std::string bits_;  // the packed offsets, then 8 zero bytes for whole-word loads
    size_t size_ = 0;
    int64_t base_ = 0;
    uint64_t mask_ = 0;
    unsigned width_ = 0;
    double divisor_ = 1;
};
// The size of the frame of reference for ks, the decimals' k (less the
// scale byte, as for the sizes below).
size_t packed_frame_size(const std::vector<int64_t> &ks);
void write_packed_decimals(ByteWriter &w, const DecimalKs &decimals);
PackedDecimals read_packed_decimals(ByteReader &r, uint64_t n);

// Decimals as packed steps: the scale, then packed_steps of their k.
void read_packed_decimal_deltas(ByteReader &r, uint64_t n, std::vector<double> &out);
// The size of the varint deltas write_integers (and write_decimals, less
// its scale byte) writes for ks.
size_t varint_deltas_size(const std::vector<int64_t> &ks);

// Any doubles: Gorilla's XOR with the previous value, bit-packed.
void write_xor(ByteWriter &w, const std::vector<double> &doubles);
void read_xor(ByteReader &r, uint64_t n, std::vector<double> &out);

// ObjectIds: time and counter as deltas, the middle five bytes only when
// they change (they are per process).
void write_objectids(ByteWriter &w, const std::vector<ObjectId> &ids);
void read_objectids(ByteReader &r, uint64_t n, std::vector<ObjectId> &out);
// ObjectIds of one process (the middle five bytes shared, as a client or
// tscoll generates them): the middle once, then the seconds and the
// counters each as packed steps, so ids that count up by a fixed stride
// take no bits. nullopt when the middles differ.
std::optional<std::string> packed_objectids(const std::vector<ObjectId> &ids);
void read_packed_objectids(ByteReader &r, uint64_t n, std::vector<ObjectId> &out);

}  // namespace tscoll::codec
