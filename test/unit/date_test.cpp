#include "core/date.hpp"

#include <gtest/gtest.h>

#include <random>

namespace tscoll {
namespace {

constexpr int64_t kSecond = 1000000;

TEST(Date, Canonical) {
    EXPECT_EQ(format_canonical_date(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(format_canonical_date(1621296000 * kSecond), "2021-05-18T00:00:00.000Z");
    EXPECT_EQ(format_canonical_date(1621296000 * kSecond + 123000), "2021-05-18T00:00:00.123Z");
    EXPECT_EQ(format_canonical_date(1621296000 * kSecond + 123456), "2021-05-18T00:00:00.123456Z");
    EXPECT_EQ(format_canonical_date(-1), "1969-12-31T23:59:59.999999Z");
    EXPECT_EQ(format_canonical_date(-1000), "1969-12-31T23:59:59.999Z");
    EXPECT_EQ(format_canonical_date(4294967296 * kSecond), "2106-02-07T06:28:16.000Z");
    EXPECT_EQ(format_canonical_date(951782400 * kSecond), "2000-02-29T00:00:00.000Z");
    EXPECT_EQ(format_canonical_date(-62167219200 * kSecond), "0000-01-01T00:00:00.000Z");
    EXPECT_EQ(format_canonical_date(253402300800 * kSecond), "+010000-01-01T00:00:00.000Z");
    EXPECT_EQ(format_canonical_date(-62167219201 * kSecond), "-000001-12-31T23:59:59.000Z");
}

TEST(Date, ParseCanonical) {
    EXPECT_EQ(parse_canonical_date("1970-01-01T00:00:00.000Z"), 0);
    EXPECT_EQ(parse_canonical_date("1969-12-31T23:59:59.999999Z"), -1);
    EXPECT_EQ(parse_canonical_date("2000-02-29T00:00:00.000Z"), 951782400 * kSecond);
    EXPECT_EQ(parse_canonical_date("+010000-01-01T00:00:00.000Z"), 253402300800 * kSecond);
    for (const char *bad :
         {"", "2021-05-18", "2021-05-18T00:00:00Z", "2021-05-18T00:00:00.0Z",
          "2021-05-18T00:00:00.000", "2021-05-18 00:00:00.000Z", "2021-02-29T00:00:00.000Z",
          "2021-13-01T00:00:00.000Z", "2021-05-18T24:00:00.000Z", "2021-05-18T00:60:00.000Z",
          "2021-05-18T00:00:60.000Z", "2021-05-18T00:00:00.000+00:00", "2021-05-18T00:00:00.000Zx",
          "+999999-01-01T00:00:00.000Z", "now"}) {
        EXPECT_FALSE(parse_canonical_date(bad)) << bad;
    }
}

TEST(Date, RandomRoundTrip) {
    std::mt19937_64 rng(42);
    // PostgreSQL's range: 4713 BC to 294276 AD; test +/-100000 years.
    std::uniform_int_distribution<int64_t> dist(-3217000000000 * kSecond / 1000,
                                                3217000000000 * kSecond / 1000);
    for (int i = 0; i < 100000; i++) {
        int64_t t = dist(rng);
        if (i % 2)
            t -= t % 1000;  // millisecond precision too
        std::string text = format_canonical_date(t);
        ASSERT_EQ(parse_canonical_date(text), t) << text;
    }
}

TEST(Date, FloorDiv) {
    EXPECT_EQ(floor_div(7, 2), 3);
    EXPECT_EQ(floor_div(-7, 2), -4);
    EXPECT_EQ(floor_div(-8, 2), -4);
    EXPECT_EQ(floor_div(0, 60), 0);
    EXPECT_EQ(floor_div(-1, 60), -1);
}

TEST(Date, IsoInput) {
    EXPECT_EQ(parse_iso_date("2021-05-18T00:00:00Z"), 1621296000 * kSecond);
    EXPECT_EQ(parse_iso_date("2021-05-18T00:00:00"), 1621296000 * kSecond);  // no offset: UTC
    EXPECT_EQ(parse_iso_date("2021-05-18T02:00:00+02:00"), 1621296000 * kSecond);
    EXPECT_EQ(parse_iso_date("2021-05-17T19:30:00-0430"), 1621296000 * kSecond);
    EXPECT_EQ(parse_iso_date("2021-05-18 00:00:00.5z"), 1621296000 * kSecond + 500000);
    EXPECT_EQ(parse_iso_date("2021-05-18T00:00:00.1234567Z"), 1621296000 * kSecond + 123457);
    EXPECT_EQ(parse_iso_date("2021-05-18T00:00Z"), 1621296000 * kSecond);
    EXPECT_EQ(parse_iso_date("2021-05-18"), 1621296000 * kSecond);
    EXPECT_EQ(parse_iso_date("1969-12-31T23:59:59.999Z"), -1000);
    EXPECT_EQ(parse_iso_date("+012021-01-01T00:00:00Z"),
              parse_canonical_date("+012021-01-01T00:00:00.000Z"));
    for (const char *bad :
         {"now", "epoch", "infinity", "2021-05-18T00:00:00 PST", "", "2021", "2021-02-29T00:00:00Z",
          "2021-05-18T24:00:00Z", "18/05/2021", "2021-05-18T00:00:00+25:00",
          "2021-05-18T00:00:00.Z", "2021-05-18T00:00:60Z", "May 18 2021"})
        EXPECT_EQ(parse_iso_date(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace tscoll
