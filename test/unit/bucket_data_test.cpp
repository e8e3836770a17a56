// The bucket data format: exact round trips and refusal of damaged input.
#include "core/bucket_data.hpp"

#include <gtest/gtest.h>

#include <random>

#include "core/compare.hpp"
#include "core/date.hpp"
#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {
namespace {

Value random_value(std::mt19937_64 &rng, int depth) {
    std::uniform_int_distribution<int> kind(0, depth > 3 ? 7 : 9);
    switch (kind(rng)) {
        case 0:
            return Value::null();
        case 1:
            return Value::boolean(rng() & 1);
        case 2:
            return Value::number(static_cast<int64_t>(rng()));
        case 3: {
            static const char *texts[] = {"12.5",      "1e-7", "123456789012345678901234567890",
                                          "-0.000123", "0.1",  "3.141592653589793238462643"};
            return Value::number(std::string(texts[rng() % 6]));
        }
        case 4: {
            static const char *pieces[] = {"a", "Z", " ", "\\", "\"", "\x01", "é", "✓", "時", "😀"};
            std::string s;
            for (int i = rng() % 20; i > 0; i--)
                s += pieces[rng() % 10];
            return Value::string(s);
        }
        case 5:
            return Value::date(static_cast<int64_t>(rng() % 20000000000000000) - 10000000000000000);
        case 6: {
            ObjectId id;
            for (auto &b : id.bytes)
                b = static_cast<uint8_t>(rng());
            return Value::objectid(id);
        }
        case 7:
            return Value::string("utf-8 ✓ 時系列");
        case 8: {
            Value o = Value::object();
            for (int i = rng() % 4; i > 0; i--)
                o.add("k" + std::to_string(rng() % 5), random_value(rng, depth + 1));
            return o;
        }
        default: {
            Value a = Value::array();
            for (int i = rng() % 4; i > 0; i--)
                a.as_array().push_back(random_value(rng, depth + 1));
            return a;
        }
    }
}

BucketData random_bucket(std::mt19937_64 &rng, std::vector<Value> &inserted) {
    BucketData data;
    for (int i = rng() % 50; i > 0; i--) {
        Value m = Value::object();
        m.add("t", Value::date(static_cast<int64_t>(rng() % 1000000000)));
        for (int f = 0; f < 6; f++)
            if (rng() % 3 != 0)  // sparse fields
                m.add("f" + std::to_string(f), random_value(rng, 0));
        data.append(m, 100);
        inserted.push_back(m);
    }
    return data;
}

TEST(BucketData, RandomRoundTrips) {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 300; round++) {
        std::vector<Value> inserted;
        BucketData data = random_bucket(rng, inserted);
        BucketData decoded = BucketData::decode(data.encode());
        ASSERT_EQ(decoded.count(), inserted.size());
        EXPECT_EQ(decoded.size(), inserted.size() * 100);
        std::vector<Value> out = decoded.measurements();
        for (size_t i = 0; i < inserted.size(); i++) {
            // Same fields with equal values (column order may differ from insertion order).
            ASSERT_EQ(out[i].as_object().size(), inserted[i].as_object().size());
            for (const Member &m : inserted[i].as_object()) {
                const Value *v = out[i].find(m.key);
                ASSERT_NE(v, nullptr);
                EXPECT_EQ(compare_values(*v, m.value), 0) << round << " " << i << " " << m.key;
            }
        }
        EXPECT_EQ(decoded.encode(), data.encode());
    }
}

TEST(BucketData, NumbersKeepTheirValue) {
    BucketData data;
    for (const char *text : {"12", "12.5", "1e-7", "123456789012345678901234567890", "-0.1",
                             "1.7976931348623157e308", "5e-324"}) {
        Value m = Value::object();
        m.add("n", Value::number(std::string(text)));
        data.append(m, 1);
    }
    std::vector<Value> out = BucketData::decode(data.encode()).measurements();
    const char *expected[] = {
        "12",    "12.5", "1e-7", "123456789012345678901234567890", "-0.1", "1.7976931348623157e308",
        "5e-324"};
    for (size_t i = 0; i < out.size(); i++)
        EXPECT_EQ(compare_numbers(out[i].find("n")->as_number().text, expected[i]), 0) << i;
}

TEST(BucketData, EveryFlippedByteIsDetected) {
    std::mt19937_64 rng(7);
    std::vector<Value> inserted;
    BucketData data;
    while (data.count() == 0)
        data = random_bucket(rng, inserted);
    std::string bytes = data.encode();
    for (size_t i = 0; i < bytes.size(); i++) {
        std::string damaged = bytes;
        damaged[i] ^= static_cast<char>(1 + rng() % 255);
        EXPECT_THROW(BucketData::decode(damaged), Error) << i;
    }
    for (size_t n = 0; n < bytes.size(); n++)
        EXPECT_THROW(BucketData::decode(bytes.substr(0, n)), Error) << n;
}

// Junk behind a valid header and checksum reaches the parser itself: it must
// throw Corrupt or decode, never read out of bounds (run under ASan).
TEST(BucketData, AdversarialInputIsRefused) {
    std::mt19937_64 rng(3);
    for (int i = 0; i < 20000; i++) {
        std::string body("TSCB\x01", 5);
        for (int n = rng() % 48; n > 0; n--)
            body.push_back(static_cast<char>(rng() % 4 == 0 ? rng() % 12 : rng()));
        uint32_t crc = crc32c(body);
        for (int k = 0; k < 4; k++)
            body.push_back(static_cast<char>(crc >> (8 * k)));
        try {
            BucketData::decode(body);
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::Corrupt);
        }
    }
}

// Header, body, checksum: a well-framed encoding of hand-written bytes.
std::string framed(const std::string &body) {
    std::string bytes = std::string("TSCB\x01", 5) + body;
    uint32_t crc = crc32c(bytes);
    for (int k = 0; k < 4; k++)
        bytes.push_back(static_cast<char>(crc >> (8 * k)));
    return bytes;
}

void expect_corrupt(const std::string &body, const std::string &why) {
    try {
        BucketData::decode(framed(body));
        ADD_FAILURE() << "decoded: " << why;
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::Corrupt);
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
}

// What the fuzz target (test/fuzz) found: inputs that decoded but would
// then exhaust memory or hand PostgreSQL values jsonb cannot hold.
TEST(BucketData, FuzzFindingsAreRefused) {
    // count 4,000,000,000 and no column: measurements() would allocate them all
    expect_corrupt(std::string("\x80\xd0\xac\xf3\x0e\x00\x00", 7), "no field is present");
    // one column "t", one string value 0xff
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x00\x06\x01\xff", 11), "not UTF-8");
    // a NUL inside a key
    expect_corrupt(std::string("\x01\x00\x01\x02t\x00\x01\x00\x00", 9), "not UTF-8");
    // a double NaN
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x00\x04\x00\x00\x00\x00\x00\x00\xf8\x7f", 16),
                   "not finite");
}

// A decode with a time window builds, in the columns after the time
// column, exactly the measurements at or after `since`; dates in the
// columns keep their delta chain across the ones it passes over.
TEST(BucketData, TimeWindowKeepsTheMeasurementsFromSince) {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 200; round++) {
        std::vector<Value> inserted;
        BucketData data = random_bucket(rng, inserted);
        if (round % 2 == 1) {  // a column before the time column
            data = BucketData();
            for (Value &m : inserted) {
                Value reordered = Value::object();
                reordered.add("d", Value::date(static_cast<int64_t>(rng() % 1000)));
                for (Member &f : m.as_object())
                    reordered.add(f.key, f.value);
                m = reordered;
                data.append(m, 100);
            }
        }
        std::string bytes = data.encode();
        UnixMicros since = static_cast<int64_t>(rng() % 1000000000);
        std::vector<std::string> wanted = {"t", "d", "f0", "f3", "f5"};
        BucketData windowed =
            BucketData::decode(bytes, &wanted, BucketData::TimeWindow{"t", since});
        for (const BucketColumn &c : windowed.columns()) {
            bool after_time = c.name != "d" && c.name != "t";
            size_t j = 0;
            for (uint32_t pos = 0; pos < inserted.size(); pos++) {
                const Value *v = inserted[pos].find(c.name);
                bool in_window = inserted[pos].find("t")->as_date() >= since;
                if (v == nullptr || (after_time && !in_window))
                    continue;
                ASSERT_LT(j, c.positions.size());
                EXPECT_EQ(c.positions[j], pos);
                EXPECT_EQ(compare_values(c.values[j], *v), 0) << c.name << " at " << pos;
                j++;
            }
            EXPECT_EQ(j, c.positions.size()) << c.name;
        }
    }
}

TEST(BucketData, Float8ColumnsHoldWhatDecodeBuilds) {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 100; round++) {
        std::vector<Value> inserted;
        std::string bytes = random_bucket(rng, inserted).encode();
        BucketData exact = BucketData::decode(bytes, nullptr);
        std::vector<std::string> fields = {"f0", "f3", "f5", "absent"};
        Float8Columns float8 = BucketData::decode_float8(bytes, "t", fields);
        ASSERT_EQ(float8.times.size(), inserted.size());
        for (size_t i = 0; i < inserted.size(); i++)
            EXPECT_EQ(float8.times[i], inserted[i].find("t")->as_date());
        for (size_t f = 0; f < fields.size(); f++) {
            const Float8Column &c = float8.fields[f];
            const BucketColumn *e = nullptr;
            for (const BucketColumn &column : exact.columns())
                e = column.name == fields[f] ? &column : e;
            ASSERT_EQ(c.positions.size(), e != nullptr ? e->positions.size() : 0u) << fields[f];
            size_t other = 0;
            for (size_t i = 0; i < c.positions.size(); i++) {
                EXPECT_EQ(c.positions[i], e->positions[i]);
                const Value &v = e->values[i];
                bool is_other = other < c.others.size() && c.others[other].first == i;
                if (is_other) {
                    EXPECT_EQ(compare_values(c.others[other++].second, v), 0);
                    // Only numbers stored as integer or double become doubles.
                    EXPECT_TRUE(!v.is(Value::Kind::Number) || !v.as_number().float8);
                } else {
                    ASSERT_TRUE(v.is(Value::Kind::Number));
                    EXPECT_EQ(c.numbers[i], v.as_number().float8.value());
                }
            }
            EXPECT_EQ(other, c.others.size());
        }
    }
}

TEST(BucketData, ExtremeDatesFormatWithoutOverflow) {
    EXPECT_EQ(format_canonical_date(INT64_MIN).rfind("-2", 0), 0u);
    EXPECT_EQ(format_canonical_date(INT64_MAX).rfind("+2", 0), 0u);
}

}  // namespace
}  // namespace tscoll
