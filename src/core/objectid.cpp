#include "core/objectid.hpp"

#include <bson/bson.h>

#include <cstring>

#include "core/error.hpp"

namespace tscoll {

ObjectId ObjectId::from_hex(std::string_view text) {
    // bson_oid_is_valid wants exactly 24 hex digits; it reads `length` bytes.
    if (text.size() != kHexLength || !bson_oid_is_valid(text.data(), text.size()))
        throw Error(ErrorCode::InvalidText,
                    "invalid input syntax for type objectid: \"" + std::string(text) + "\"",
                    "An ObjectId is written as 24 hexadecimal digits.");
    char buffer[kHexLength + 1];
    std::memcpy(buffer, text.data(), kHexLength);
    buffer[kHexLength] = '\0';
    bson_oid_t oid;
    bson_oid_init_from_string(&oid, buffer);
    ObjectId result;
    std::memcpy(result.bytes.data(), oid.bytes, kSize);
    return result;
}

namespace {

// The ObjectId with its time component set to `seconds` (MongoDB stores
// them modulo 2^32: exact for 1970 - 2106).
ObjectId with_seconds(const bson_oid_t &oid, int64_t seconds) {
    uint32_t t = static_cast<uint32_t>(static_cast<uint64_t>(seconds));
    ObjectId result;
    std::memcpy(result.bytes.data(), oid.bytes, ObjectId::kSize);
    result.bytes[0] = static_cast<uint8_t>(t >> 24);
    result.bytes[1] = static_cast<uint8_t>(t >> 16);
    result.bytes[2] = static_cast<uint8_t>(t >> 8);
    result.bytes[3] = static_cast<uint8_t>(t);
    return result;
}

}  // namespace

ObjectId ObjectId::generate(int64_t seconds) {
    bson_oid_t oid;
    bson_oid_init(&oid, nullptr);
    return with_seconds(oid, seconds);
}

ObjectIdMaker::ObjectIdMaker() : context_(bson_context_new(BSON_CONTEXT_NONE)) {}

ObjectIdMaker::~ObjectIdMaker() {
    bson_context_destroy(context_);
}

ObjectId ObjectIdMaker::make(int64_t seconds) {
    bson_oid_t oid;
    bson_oid_init(&oid, context_);
    return with_seconds(oid, seconds);
}

ObjectId ObjectId::from_parts(uint32_t seconds, uint64_t bits) {
    ObjectId result;
    for (int i = 0; i < 4; i++)
        result.bytes[i] = static_cast<uint8_t>(seconds >> (24 - 8 * i));
    for (int i = 0; i < 8; i++)
        result.bytes[4 + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    return result;
}

int32_t ObjectId::series_hash() const {
    uint32_t hash = 0;
    for (int i = 4; i < 8; i++)
        hash = (hash << 8) | bytes[i];
    return static_cast<int32_t>(hash);
}

ObjectId ObjectId::with_series_hash(int32_t hash) const {
    ObjectId result = *this;
    auto bits = static_cast<uint32_t>(hash);
    for (int i = 4; i < 8; i++)
        result.bytes[i] = static_cast<uint8_t>(bits >> (8 * (7 - i)));
    return result;
}

void ObjectId::write_hex(char *out) const {
    bson_oid_t oid;
    std::memcpy(oid.bytes, bytes.data(), kSize);
    bson_oid_to_string(&oid, out);
}

std::string ObjectId::to_hex() const {
    char buffer[kHexLength + 1];
    write_hex(buffer);
    return std::string(buffer, kHexLength);
}

uint32_t ObjectId::seconds() const {
    return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
           uint32_t{bytes[3]};
}

}  // namespace tscoll
