// fold_typed against the value path it stands for: a stored bucket and its
// tails decoded, the appended measurements added, encoded again
// (Bucket::encode, Bucket::control). Wherever it answers, the bytes and
// the control must be the same.
#include "core/bucket_fold.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/bucket.hpp"
#include "core/bucket_data.hpp"
#include "core/objectid.hpp"
#include "core/value.hpp"

namespace tscoll {
namespace {

constexpr UnixMicros kStart = 1451606400000000;

std::string decimal(double d, int scale) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", scale, d);
    return text;
}

// A field's value at measurement i, by a kind of column.
using Field = std::function<std::optional<Value>(int i, std::mt19937_64 &rng)>;

std::vector<Field> fields_of(int kind, std::mt19937_64 &setup) {
    int scale = static_cast<int>(setup() % 4);
    auto walk = std::make_shared<double>(static_cast<double>(setup() % 10000) / 100);
    auto step = [walk](std::mt19937_64 &rng, double by) {
        *walk += (static_cast<double>(rng() % 201) / 100 - 1) * by;
        return *walk;
    };
    switch (kind) {
        case 0:  // TSBS: decimals of 2 places that walk, with trailing zeros
            return {
                [=](int, std::mt19937_64 &rng) { return Value::number(decimal(step(rng, 1), 2)); },
                [=](int, std::mt19937_64 &rng) { return Value::number(decimal(step(rng, 5), 2)); }};
        case 1:  // integers, some spelled with zeros after the point
            return {[=](int, std::mt19937_64 &rng) {
                return Value::number(rng() % 7 == 0 ? decimal(std::round(step(rng, 30)), 1 + scale)
                                                    : std::to_string(static_cast<int64_t>(
                                                          std::round(step(rng, 30)))));
            }};
        case 2:  // decimals of mixed scales, some whole
            return {[=](int, std::mt19937_64 &rng) {
                return Value::number(decimal(step(rng, 3), static_cast<int>(rng() % 5)));
            }};
        case 3:  // large integers (not all exact as doubles), sparse
            return {[=](int i, std::mt19937_64 &rng) -> std::optional<Value> {
                if (i % 3 == 1)
                    return std::nullopt;
                return Value::number(static_cast<int64_t>(rng() >> (rng() % 64)));
            }};
        case 4:  // small decimals and big ones with many digits
            return {[=](int, std::mt19937_64 &rng) {
                return Value::number(rng() % 2
                                         ? decimal(static_cast<double>(rng() % 1000) / 1e7, 7)
                                         : decimal(static_cast<double>(rng() % 100000000) +
                                                       static_cast<double>(rng() % 1000) / 1000,
                                                   3 + scale));
            }};
        case 5:  // jittered dates and random ObjectIds beside the readings
            return {[=](int i, std::mt19937_64 &rng) {
                        return Value::date(kStart + i * int64_t{1000000} +
                                           static_cast<int64_t>(rng() % 900000));
                    },
                    [=](int, std::mt19937_64 &rng) {
                        ObjectId id;
                        for (uint8_t &b : id.bytes)
                            b = static_cast<uint8_t>(rng());
                        return Value::objectid(id);
                    }};
        case 6:  // a column that a string joins: left to the values
            return {[=](int i, std::mt19937_64 &rng) {
                return i == 25 ? Value::string("x") : Value::number(decimal(step(rng, 1), 2));
            }};
        default:  // doubles of every digit (XOR): left to the values
            return {[=](int, std::mt19937_64 &rng) {
                return Value::real(static_cast<double>(rng() % 1000000007) / 1000003);
            }};
    }
}

struct Case {
    std::vector<std::string> stored;  // encoded: the bucket, then its tails
    BucketData appended;
};

// Measurements split into a bucket of `first`, tails of `tail` and the
// appended rest; fields named by kind, a field missing now and then.
Case make_case(std::mt19937_64 &rng, int kind, int first, int tail, int tails, int appended) {
    std::vector<Field> fields = fields_of(kind, rng);
    Case c;
    BucketData piece;
    int n = first + tail * tails + appended;
    for (int i = 0; i < n; i++) {
        Value m = Value::object();
        m.add("time", Value::date(kStart + i * int64_t{10000000}));
        m.add("_id", Value::objectid(ObjectId::from_parts(1451606400 + static_cast<uint32_t>(i),
                                                          0x1234567800000000ull + i * 7ull)));
        for (size_t f = 0; f < fields.size(); f++)
            if (std::optional<Value> v = fields[f](i, rng))
                m.add("f" + std::to_string(f), std::move(*v));
        if (rng() % 50 == 0)
            m.add("rare", Value::number(std::to_string(i)));
        BucketData &to = i >= n - appended ? c.appended : piece;
        to.append(m, 100 + static_cast<uint64_t>(i));
        bool piece_ends = i + 1 == first ||
                          (i + 1 > first && i + 1 <= n - appended && (i + 1 - first) % tail == 0);
        if (piece_ends) {
            if (c.stored.empty() && rng() % 4 == 0)
                piece.mark_full();
            c.stored.push_back(piece.encode());
            piece = BucketData();
        }
    }
    return c;
}

struct Expected {
    std::string data;
    Value control;
};

Expected value_path(const Case &c, bool full) {
    BucketData data = BucketData::decode(c.stored[0]);
    for (size_t i = 1; i < c.stored.size(); i++)
        data.append(BucketData::decode(c.stored[i]));
    data.append(c.appended);
    Bucket bucket(ObjectId::from_parts(1451606400, 1), kStart, "time", std::move(data));
    if (full)
        bucket.mark_full();
    return {bucket.encode(), bucket.control()};
}

std::optional<FoldedBucket> typed_path(const Case &c, bool full) {
    std::vector<std::string_view> pieces(c.stored.begin(), c.stored.end());
    return fold_typed(pieces, c.appended, kStart, "time", full);
}

TEST(BucketFold, SameBytesAndControlAsTheValues) {
    std::mt19937_64 rng(11);
    int typed = 0, total = 0;
    for (int round = 0; round < 400; round++) {
        int kind = round % 8;
        int first = 1 + static_cast<int>(rng() % 40);
        int tail = 1 + static_cast<int>(rng() % 12);
        int tails = static_cast<int>(rng() % 16);
        int appended = static_cast<int>(rng() % 12);
        Case c = make_case(rng, kind, first, tail, tails, appended);
        bool full = rng() % 5 == 0;
        Expected expected = value_path(c, full);
        std::optional<FoldedBucket> folded = typed_path(c, full);
        total++;
        // A string joins kind 6 at measurement 25; kind 7 is XOR's.
        int n = first + tail * tails + appended;
        if (kind == 7 || (kind == 6 && n > 25)) {
            EXPECT_FALSE(folded) << "round " << round;
            continue;
        }
        ASSERT_TRUE(folded) << "round " << round << ", kind " << kind;
        typed++;
        EXPECT_EQ(folded->data, expected.data) << "round " << round << ", kind " << kind;
        std::vector<std::string_view> pieces(c.stored.begin(), c.stored.end());
        EXPECT_EQ(fold_typed_data(pieces, c.appended, full), expected.data) << "round " << round;
        EXPECT_TRUE(spelled_alike(folded->control, expected.control))
            << "round " << round << ": " << to_json_text(folded->control) << " against "
            << to_json_text(expected.control);
    }
    EXPECT_GE(typed, total * 6 / 8);
}

TEST(BucketFold, LeavesKindsThatChangeToTheValues) {
    BucketData bucket, tail;
    Value m = Value::object();
    m.add("time", Value::date(kStart));
    m.add("v", Value::number(std::string("1.5")));
    bucket.append(m, 50);
    Value later = Value::object();
    later.add("time", Value::date(kStart + 1000000));
    later.add("v", Value::date(kStart));
    tail.append(later, 50);
    std::string stored = bucket.encode();
    std::vector<std::string_view> pieces{stored};
    EXPECT_FALSE(fold_typed(pieces, tail, kStart, "time", false));
    // The same kinds throughout fold.
    Value same = Value::object();
    same.add("time", Value::date(kStart + 1000000));
    same.add("v", Value::number(std::string("2.50")));
    BucketData numbers;
    numbers.append(same, 50);
    std::optional<FoldedBucket> folded = fold_typed(pieces, numbers, kStart, "time", false);
    ASSERT_TRUE(folded);
    BucketData whole = BucketData::decode(folded->data);
    ASSERT_EQ(whole.count(), 2u);
    EXPECT_EQ(whole.columns()[1].values[1].as_number().text, "2.50");
    EXPECT_EQ(to_json_text(folded->control),
              "{\"version\": 2, \"min\": {\"time\": \"2016-01-01T00:00:00.000Z\", \"v\": 1.5}, "
              "\"max\": {\"time\": \"2016-01-01T00:00:01.000Z\", \"v\": 2.50}, \"count\": 2}");
}

}  // namespace
}  // namespace tscoll
