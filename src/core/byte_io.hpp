// Bytes of the bucket data format (doc/BUCKET_FORMAT.md): LEB128 varints,
// zigzag, and a reader that refuses to run past its input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace tscoll {

[[noreturn]] inline void corrupt(const std::string &what) {
    throw Error(ErrorCode::Corrupt, "bucket data is corrupt: " + what);
}

inline uint64_t zigzag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

inline int64_t unzigzag(uint64_t v) {
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// The bytes ByteWriter::varint writes for v.
inline size_t varint_size(uint64_t v) {
    size_t size = 1;
    for (; v >= 0x80; v >>= 7)
        size++;
    return size;
}

// a - b and a + b without signed overflow: deltas wrap, as they are only
// ever added back.
inline int64_t wrapping_sub(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapping_add(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

class ByteWriter {
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
    std::string take() { return std::move(out_); }
    const std::string &buffer() const { return out_; }

  protected:
    std::string out_;
};

class ByteReader {
  public:
    explicit ByteReader(std::string_view in) : in_(in) {}
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
    // Reads n varints, calling each(v) for each: the loop keeps its place
    // in locals, which the stores of `each` cannot make it load again.
    template <typename Each>
    void varints(uint64_t n, Each &&each) {
        const auto *begin = reinterpret_cast<const uint8_t *>(in_.data());
        const uint8_t *p = begin + pos_;
        const uint8_t *end = begin + in_.size();
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = 0;
            for (int shift = 0;; shift += 7) {
                if (shift >= 64)
                    corrupt("varint too long");
                if (p == end)
                    corrupt("unexpected end of data");
                uint8_t b = *p++;
                v |= static_cast<uint64_t>(b & 0x7f) << shift;
                if ((b & 0x80) == 0)
                    break;
            }
            each(v);
        }
        pos_ = static_cast<size_t>(p - begin);
    }
    // A count of items, each at least one byte long.
    uint64_t count() {
        uint64_t n = varint();
        if (n > in_.size() - pos_)
            corrupt("count beyond the end of data");
        return n;
    }
    bool at_end() const { return pos_ == in_.size(); }
    size_t remaining() const { return in_.size() - pos_; }

  protected:
    std::string_view in_;
    size_t pos_ = 0;
};

}  // namespace tscoll
