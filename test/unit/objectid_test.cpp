#include "core/objectid.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"

namespace tscoll {
namespace {

TEST(ObjectId, HexRoundTrip) {
    ObjectId id = ObjectId::from_hex("5F00000000000000000000ab");
    EXPECT_EQ(id.to_hex(), "5f00000000000000000000ab");
    EXPECT_EQ(id.bytes[0], 0x5f);
    EXPECT_EQ(id.bytes[11], 0xab);
}

TEST(ObjectId, RejectsMalformedText) {
    for (const char *bad : {"", "5f", "5f000000000000000000001", "5f00000000000000000000011",
                            "5f000000000000000000000g", " 5f0000000000000000000001"}) {
        EXPECT_THROW(ObjectId::from_hex(bad), Error) << bad;
    }
    try {
        ObjectId::from_hex("zz");
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::InvalidText);
    }
}

TEST(ObjectId, TimeComponent) {
    EXPECT_EQ(ObjectId::from_hex("ffffffff0000000000000000").seconds(), 4294967295u);
    EXPECT_EQ(ObjectId::from_hex("60a305800000000000000000").seconds(), 1621296512u);
    EXPECT_EQ(ObjectId::generate(1621296000).seconds(), 1621296000u);
    // modulo 2^32, as in MongoDB
    EXPECT_EQ(ObjectId::generate(-1).seconds(), 4294967295u);
    EXPECT_EQ(ObjectId::generate(int64_t{1} << 32).seconds(), 0u);
}

TEST(ObjectId, FromParts) {
    EXPECT_EQ(ObjectId::from_parts(0, 0x0123456789abcdefULL).to_hex(), "000000000123456789abcdef");
    EXPECT_EQ(ObjectId::from_parts(1621296512u, ~uint64_t{0}).to_hex(), "60a30580ffffffffffffffff");
}

TEST(ObjectId, GeneratedAreDistinct) {
    std::set<std::string> seen;
    for (int i = 0; i < 10000; i++)
        seen.insert(ObjectId::generate(1000).to_hex());
    EXPECT_EQ(seen.size(), 10000u);
}

TEST(ObjectId, SeriesHashTakesBytesFourToSevenOnly) {
    ObjectId id = ObjectId::from_hex("65a1b2c3d4e5f60718293a4b");
    ObjectId hashed = id.with_series_hash(-2);
    EXPECT_EQ(hashed.series_hash(), -2);
    EXPECT_EQ(hashed.to_hex(), "65a1b2c3fffffffe18293a4b");
    EXPECT_EQ(hashed.seconds(), id.seconds());
    EXPECT_EQ(id.series_hash(), static_cast<int32_t>(0xd4e5f607u));
}

TEST(ObjectId, MakersMakeDistinctIds) {
    ObjectIdMaker first, second;
    std::set<std::string> seen;
    for (int i = 0; i < 1000; i++) {
        ObjectId a = first.make(1621296000), b = second.make(-1);
        EXPECT_EQ(a.seconds(), 1621296000u);
        EXPECT_EQ(b.seconds(), 4294967295u);
        seen.insert(a.to_hex().substr(8));
        seen.insert(b.to_hex().substr(8));
    }
    // Each maker's random bytes and counter are its own.
    EXPECT_EQ(seen.size(), 2000u);
}

}  // namespace
}  // namespace tscoll
