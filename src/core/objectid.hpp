// MongoDB's ObjectId: 4-byte big-endian seconds, 5 random bytes, a 3-byte
// counter. Generation and text conversion go through libbson.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

struct _bson_context_t;

namespace tscoll {

struct ObjectId {
    static constexpr size_t kSize = 12;
    static constexpr size_t kHexLength = 24;
    std::array<uint8_t, kSize> bytes{};

    // Parses 24 hex digits (either case); throws Error(InvalidText) otherwise.
    static ObjectId from_hex(std::string_view text);
    // A fresh ObjectId whose time component is `seconds` (modulo 2^32).
    static ObjectId generate(int64_t seconds);
    // The ObjectId whose time component is `seconds` and whose other 8
    // bytes are `bits` (big-endian).
    static ObjectId from_parts(uint32_t seconds, uint64_t bits);

    std::string to_hex() const;       // 24 lower-case hex digits
    void write_hex(char *out) const;  // the same into out[25], NUL-terminated
    uint32_t seconds() const;         // the time component, unsigned

    // Bytes 4-7 (big-endian). A distributed collection's bucket ids carry
    // their series' hash there, and its tails' ids their bucket's: the
    // shard key is a function of the id (doc/ARCHITECTURE.md, Scale-out).
    int32_t series_hash() const;
    ObjectId with_series_hash(int32_t hash) const;
};

// Fresh ObjectIds for one thread of one process. ObjectId::generate uses
// libbson's default context, which asks the system for the process id at
// every id; a maker has a context of its own and does not, so it must not
// outlive a fork or be shared between threads.
class ObjectIdMaker {
  public:
    ObjectIdMaker();
    ~ObjectIdMaker();
    ObjectIdMaker(const ObjectIdMaker &) = delete;
    ObjectIdMaker &operator=(const ObjectIdMaker &) = delete;
    ObjectId make(int64_t seconds);

  private:
    _bson_context_t *context_;
};

}  // namespace tscoll
