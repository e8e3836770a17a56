// The bucket data format: exact round trips and refusal of damaged input.
#include "core/bucket_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>

#include "core/bucket.hpp"
#include "core/bucket_bytes.hpp"
#include "core/column_codec.hpp"
#include "core/compare.hpp"
#include "core/date.hpp"
#include "core/error.hpp"
#include "core/number.hpp"
#include "core/objectid.hpp"

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

// Values of one kind, for the typed codecs of version 2: integers (some
// beyond 2^53), doubles kept to a few decimals, any doubles (with -0),
// integers and decimals mixed, and ObjectIds.
Value typed_value(std::mt19937_64 &rng, int field, double &walk) {
    walk += static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000) / 100;
    switch (field) {
        case 0:
            return Value::number(rng() % 5 == 0 ? static_cast<int64_t>(rng())
                                                : static_cast<int64_t>(rng() % 1000) - 500);
        case 1:
            return Value::number(shortest_text(std::round(walk * 100) / 100));
        case 2: {
            std::uniform_real_distribution<double> any(-1e300, 1e300);
            double d = rng() % 10 == 0 ? -0.0 : rng() % 3 == 0 ? walk : any(rng);
            return Value::number(shortest_text(d));
        }
        case 3:
            return rng() % 2 ? Value::number(static_cast<int64_t>(rng() % 100))
                             : Value::number(shortest_text(std::round(walk * 1000) / 1000));
        default: {
            ObjectId id = ObjectId::generate(1600000000 + static_cast<int64_t>(rng() % 3));
            if (rng() % 8 == 0)
                id.bytes[5] ^= 1;
            return Value::objectid(id);
        }
    }
}

BucketData random_bucket(std::mt19937_64 &rng, std::vector<Value> &inserted) {
    BucketData data;
    double walk = 50;
    int64_t time = static_cast<int64_t>(rng() % 1000000000);
    for (int i = rng() % 50; i > 0; i--) {
        Value m = Value::object();
        // regular intervals, with some out of order
        time += rng() % 4 == 0 ? static_cast<int64_t>(rng() % 1000000) - 500000 : 10000;
        m.add("t", Value::date(rng() % 8 == 0 ? static_cast<int64_t>(rng() % 1000000000) : time));
        for (int f = 0; f < 6; f++)
            if (rng() % 3 != 0)  // sparse fields
                m.add("f" + std::to_string(f), random_value(rng, 0));
        for (int f = 0; f < 5; f++)
            if (rng() % 5 != 0)
                m.add("typed" + std::to_string(f), typed_value(rng, f, walk));
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

// jsonb's text of a number, its scale included, whatever codec its column
// takes: "3.50" reads back "3.50", not "3.5" (SPEC: numbers keep their
// jsonb text).
TEST(BucketData, NumbersKeepTheirScale) {
    const std::vector<std::vector<const char *>> columns = {
        {"1.0", "2", "3.50", "100.000", "-0.50", "0.0"},  // integers and decimals, mixed scales
        {"12.50", "12.34", "12.00", "13.10", "12.35"},    // a common scale, as "%.2f" writes
        {"12.50", "12", "7", "12.5"},                     // scales that differ from the common
        {"1.0", "2.0", "3.0"},                            // integers with a scale
        {"0.30000000000000004", "0.10", "1e-7", "0.0000001000"},  // doubles (XOR) and exponents
        {"123456789012345678901234567890.0", "1.50"},             // beyond doubles: tagged
    };
    std::mt19937_64 rng(7);
    for (size_t c = 0; c < columns.size(); c++) {
        BucketData data;
        std::vector<std::string> texts;
        for (int i = 0; i < 40; i++) {
            const char *text = columns[c][rng() % columns[c].size()];
            Value m = Value::object();
            m.add("t", Value::date(i * 1000000));
            if (i % 7 != 3) {  // sparse, so that positions come first
                m.add("n", Value::number(text));
                Value nested = Value::object();
                nested.add("a", Value::array({Value::number(text), Value::number("2.50")}));
                m.add("o", std::move(nested));
            }
            texts.push_back(i % 7 != 3 ? text : "");
            data.append(m, 1);
        }
        std::string bytes = data.encode();
        std::vector<Value> out = BucketData::decode(bytes).measurements();
        for (size_t i = 0; i < out.size(); i++) {
            if (texts[i].empty())
                continue;
            const std::string &text = texts[i];
            std::string expected = text.find('e') == std::string::npos ? text : "";
            const std::string &got = out[i].find("n")->as_number().text;
            EXPECT_EQ(compare_numbers(got, text), 0) << c << " " << i;
            EXPECT_EQ(display_scale(got), display_scale(text)) << c << " " << got << " " << text;
            if (!expected.empty()) {
                EXPECT_EQ(got, expected) << c << " " << i;
            }
            const Value &a = out[i].find("o")->find("a")->as_array()[0];
            EXPECT_EQ(display_scale(a.as_number().text), display_scale(text)) << c << " " << i;
            EXPECT_EQ(out[i].find("o")->find("a")->as_array()[1].as_number().text, "2.50");
        }
        // The float8 reader reads past the scales to the same numbers.
        Float8Columns f = BucketData::decode_float8(bytes, "t", {"n"});
        Float8Cursor cursor(f.fields[0]);
        for (uint32_t i = 0; i < out.size(); i++) {
            Float8Cursor::Entry e = cursor.at(i);
            ASSERT_EQ(e.present, !texts[i].empty()) << c << " " << i;
            if (e.present && e.other == nullptr) {
                EXPECT_EQ(compare_numbers(shortest_text(e.number), texts[i]), 0) << c << " " << i;
            }
        }
        // Re-encoding what was read gives the same bytes.
        BucketData again = BucketData::decode(bytes);
        EXPECT_EQ(again.encode(), bytes) << c;
    }
    EXPECT_EQ(display_scale("1e-7"), 7);
    EXPECT_EQ(display_scale("1.50e1"), 1);
    EXPECT_EQ(display_scale("1E+3"), 0);
    EXPECT_EQ(with_display_scale("1e-7", 9), "0.000000100");
    EXPECT_EQ(with_display_scale("-12.5", 3), "-12.500");
    EXPECT_EQ(with_display_scale("0", 2), "0.00");
    EXPECT_EQ(with_display_scale("1E+3", 1), "1000.0");
}

// Adversarial columns round-trip, whichever codec each takes: constant,
// alternating, int64's and double's extremes, -0, subnormals, 1,000-digit
// numbers, scale changes (1.0 then 1.00 then 1), walks (coded steps) with
// jumps, dates at their ends, ObjectIds of one process and of many; at
// lengths 1, 2, 3, 17 and 1,000, and with every other measurement missing
// the field. Numbers read as float8 are the doubles of their text.
// Texts with zeros their values do not need (numeric's quotients, "%.2f")
// read back as written, and the read-back scale counted in place is the
// one of the double's shortest text.
TEST(BucketData, ScaledNumbersReadBackAsWritten) {
    std::mt19937_64 rng(35);
    for (int round = 0; round < 60; round++) {
        BucketData data;
        std::vector<std::string> texts;
        int common = static_cast<int>(rng() % 19);
        for (int i = 0; i < 200; i++) {
            std::string text = rng() % 3 == 0 ? "-" : "";
            text += std::to_string(rng() % (rng() % 2 ? 100 : 10000000));
            int scale = rng() % 4 == 0 ? static_cast<int>(rng() % 19) : common;
            if (scale > 0) {
                text += '.';
                int digits = static_cast<int>(rng() % (scale + 1));
                for (int k = 0; k < scale; k++)
                    text += k < digits ? static_cast<char>('0' + rng() % 10) : '0';
            }
            if (text.find_first_not_of("-0.") == std::string::npos)
                text = "1" + text.substr(text[0] == '-');  // no minus zero
            ExactNumber exact = exact_number(text);
            if (exact.real) {
                ASSERT_EQ(bucket_bytes::read_back_scale(text, exact),
                          display_scale(shortest_text(*exact.real)))
                    << text;
            }
            Value m = Value::object();
            m.add("t", Value::date(i * 1000000));
            m.add("n", Value::number(text));
            data.append(m, 1);
            texts.push_back(text);
        }
        std::vector<Value> out = BucketData::decode(data.encode()).measurements();
        for (size_t i = 0; i < out.size(); i++)
            ASSERT_EQ(out[i].find("n")->as_number().text, texts[i]) << round << " " << i;
    }
}

TEST(BucketData, CodecsRoundTripAdversarialColumns) {
    std::mt19937_64 rng(17);
    std::string thousand_digits(1000, '7');
    using Column = std::function<Value(size_t)>;
    auto text = [](std::string t) { return Value::number(std::move(t)); };
    std::vector<std::pair<const char *, Column>> columns = {
        {"constant", [&](size_t) { return text("42"); }},
        {"alternating int64 ends",
         [&](size_t i) { return text(i % 2 ? "9223372036854775807" : "-9223372036854775808"); }},
        {"int64 ends and zero",
         [&](size_t i) {
             return text(i % 3 == 0 ? "0" : i % 3 == 1 ? "9223372036854775807" : "-1");
         }},
        {"double ends",
         [&](size_t i) {
             const char *ends[] = {"1.7976931348623157e308",
                                   "-1.7976931348623157e308",
                                   "5e-324",
                                   "-5e-324",
                                   "2.2250738585072014e-308",
                                   "-0",
                                   "0"};
             return text(ends[i % 7]);
         }},
        {"subnormal walk", [&](size_t i) { return text(std::to_string(i % 50) + "e-320"); }},
        {"1,000 digits",
         [&](size_t i) {
             return text((i % 2 ? "-" : "") + thousand_digits + (i % 3 ? ".5" : ""));
         }},
        {"scale changes",
         [&](size_t i) {
             const char *scales[] = {"1.0", "1.00", "1", "1.000", "-0.50", "2.5"};
             return text(scales[i % 6]);
         }},
        {"2^53 + 1 among decimals",
         [&](size_t i) { return text(i % 2 ? "0.5" : "9007199254740993"); }},
        {"2^53 and beyond",
         [&](size_t i) { return text(i % 2 ? "9007199254740993" : "9007199254740992.5"); }},
        {"dates at their ends", [&](size_t i) { return Value::date(i % 2 ? kMinTime : kMaxTime); }},
        {"dates jittered",
         [&](size_t i) { return Value::date(static_cast<int64_t>(i * 1000 + rng() % 999)); }},
        {"ObjectIds of one process",
         [&](size_t) { return Value::objectid(ObjectId::generate(1600000000)); }},
        {"ObjectIds of many",
         [&](size_t) {
             ObjectId id;
             for (uint8_t &b : id.bytes)
                 b = static_cast<uint8_t>(rng());
             return Value::objectid(id);
         }},
        {"TSBS walk",
         [&](size_t i) {
             static double walk = 50;
             std::normal_distribution<double> normal(0.0, 1.0);
             walk = std::clamp(walk + normal(rng), 0.0, 100.0);
             return text(std::to_string(static_cast<int64_t>(walk)) + (i % 100 == 0 ? ".5" : ""));
         }},
        {"decimals that jump", [&](size_t i) { return text(i % 5 ? "0.01" : "900719925474.09"); }},
        {"random walk with jumps",
         [&](size_t i) {
             return text(std::to_string(static_cast<int64_t>(i % 7) * (i % 97 ? 1 : 1000000)));
         }},
    };
    for (const auto &[name, column] : columns)
        for (size_t n : {1, 2, 3, 17, 1000})
            for (bool sparse : {false, true}) {
                BucketData data;
                std::vector<std::optional<Value>> values;
                for (size_t i = 0; i < n; i++) {
                    Value m = Value::object();
                    m.add("t", Value::date(static_cast<int64_t>(i) * 1000000));
                    values.emplace_back();
                    if (!sparse || i % 2 == 0) {
                        values.back() = column(i);
                        m.add("v", *values.back());
                    }
                    data.append(m, 10);
                }
                std::string bytes = data.encode();
                BucketData decoded = BucketData::decode(bytes);
                std::vector<Value> out = decoded.measurements();
                ASSERT_EQ(out.size(), n) << name;
                for (size_t i = 0; i < n; i++) {
                    const Value *v = out[i].find("v");
                    ASSERT_EQ(v != nullptr, values[i].has_value()) << name << " " << i;
                    if (!v)
                        continue;
                    ASSERT_EQ(compare_values(*v, *values[i]), 0) << name << " " << n << " " << i;
                    if (v->is(Value::Kind::Number)) {
                        EXPECT_EQ(display_scale(v->as_number().text),
                                  display_scale(values[i]->as_number().text))
                            << name << " " << i;
                    }
                    if (v->is(Value::Kind::ObjectId)) {
                        EXPECT_EQ(v->as_objectid().bytes, values[i]->as_objectid().bytes);
                    }
                }
                EXPECT_EQ(decoded.encode(), bytes) << name << " " << n;
                Float8Columns f = BucketData::decode_float8(bytes, "t", {"v"});
                EXPECT_EQ(f.times.size(), n) << name;
                if (f.fields.empty())
                    continue;
                Float8Cursor cursor(f.fields[0]);
                for (uint32_t i = 0; i < n; i++) {
                    Float8Cursor::Entry e = cursor.at(i);
                    ASSERT_EQ(e.present, values[i].has_value()) << name << " " << i;
                    if (!e.present || e.other != nullptr)
                        continue;
                    double expected = std::strtod(values[i]->as_number().text.c_str(), nullptr);
                    EXPECT_EQ(e.number, expected) << name << " " << n << " " << i;
                }
            }
}

// Readings that walk by small steps (TSBS's metrics) pack their steps in a
// few bits each; extremes that would overflow a step take another codec.
TEST(BucketData, PackedStepsHoldWalks) {
    std::mt19937_64 rng(11);
    auto bucket_of = [](const std::vector<std::string> &texts) {
        BucketData data;
        for (size_t i = 0; i < texts.size(); i++) {
            Value m = Value::object();
            m.add("t", Value::date(static_cast<int64_t>(i) * 10000000));
            m.add("v", Value::number(texts[i]));
            data.append(m, 10);
        }
        return data;
    };
    std::vector<std::vector<std::string>> columns(6);
    int64_t walk = 50, decimal_walk = 5000;
    for (int i = 0; i < 1000; i++) {
        walk = std::clamp<int64_t>(walk + static_cast<int64_t>(rng() % 11) - 5, 0, 100);
        columns[0].push_back(std::to_string(walk));  // integers, steps of at most 5
        decimal_walk =
            std::clamp<int64_t>(decimal_walk + static_cast<int64_t>(rng() % 1001) - 500, 0, 10000);
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", static_cast<double>(decimal_walk) / 100);
        columns[1].push_back(text);  // 2 decimals, steps of at most 5.00
        columns[2].push_back(std::to_string(static_cast<int64_t>(rng())));  // any int64
        // alternating extremes: a step beyond int64
        columns[3].push_back(i % 2 ? "9223372036854775807" : "-9223372036854775808");
        columns[4].push_back(std::to_string(1000000 + i * 3));  // constant steps: no bits
        columns[5].push_back(std::to_string(-i) + ".5");        // negative decimals
    }
    for (size_t c = 0; c < columns.size(); c++) {
        BucketData data = bucket_of(columns[c]);
        std::string bytes = data.encode();
        std::vector<Value> out = BucketData::decode(bytes).measurements();
        Float8Columns f = BucketData::decode_float8(bytes, "t", {"v"});
        Float8Cursor cursor(f.fields[0]);
        for (uint32_t i = 0; i < out.size(); i++) {
            const std::string &text = columns[c][i];
            ASSERT_EQ(compare_numbers(out[i].find("v")->as_number().text, text), 0)
                << c << " " << i;
            EXPECT_EQ(display_scale(out[i].find("v")->as_number().text), display_scale(text));
            Float8Cursor::Entry e = cursor.at(i);
            if (e.other == nullptr) {
                EXPECT_EQ(e.number, std::strtod(text.c_str(), nullptr)) << c << " " << i;
            }
        }
        EXPECT_EQ(BucketData::decode(bytes).encode(), bytes) << c;
    }
    // A walk of integers by steps of at most 5 takes 4 bits a value, not a
    // varint byte; one of 2 decimals by at most 5.00, 10 bits, not 14.
    EXPECT_LT(bucket_of(columns[0]).encode().size(), 1000u * 2 + 700);
    EXPECT_LT(bucket_of(columns[1]).encode().size(), 1000u * 2 + 1300);
    EXPECT_LT(bucket_of(columns[4]).encode().size(), 1000u * 2 + 40);
    // Times at a regular interval take no bits; with jitter, a few.
    for (int64_t jitter : {int64_t{0}, int64_t{1000}, int64_t{1} << 40}) {
        BucketData times;
        std::vector<int64_t> expected;
        for (int64_t i = 0; i < 1000; i++) {
            expected.push_back(i * 10000000 + static_cast<int64_t>(rng() % (jitter + 1)));
            Value m = Value::object();
            m.add("t", Value::date(expected.back()));
            times.append(m, 10);
        }
        std::string bytes = times.encode();
        if (jitter == 0) {
            EXPECT_LT(bytes.size(), 60u);
        }
        std::vector<Value> out = BucketData::decode(bytes).measurements();
        Float8Columns f = BucketData::decode_float8(bytes, "t", {});
        for (size_t i = 0; i < expected.size(); i++) {
            EXPECT_EQ(out[i].find("t")->as_date(), expected[i]) << jitter << " " << i;
            EXPECT_EQ(f.times[i], expected[i]) << jitter << " " << i;
        }
    }
    // Bytes a writer cannot have produced: a width beyond 56 bits, a decimal
    // k beyond 2^53.
    auto refused = [](const std::string &bytes, bool decimals) {
        ByteReader r(bytes);
        std::vector<int64_t> ks;
        std::vector<double> ds;
        try {
            if (decimals)
                codec::read_packed_decimal_deltas(r, 3, ds);
            else
                codec::read_packed_deltas(r, 3, ks);
        } catch (const Error &e) {
            return e.code() == ErrorCode::Corrupt;
        }
        return false;
    };
    EXPECT_TRUE(refused(std::string("\x00\x00\x39\x00", 4) + std::string(30, '\xff'), false));
    ByteWriter w;  // scale 0, first 2^53 + 1... reached by a step
    w.byte(0);
    w.varint(zigzag(int64_t{1} << 53));
    w.varint(zigzag(1));
    w.byte(0);
    w.varint(0);
    EXPECT_TRUE(refused(w.take(), true));
}

// Steps that are few and unevenly common (TSBS's integer walk: 0 in 3 of 8,
// +-1 in 1 of 4 each, +-2 rarely) take a prefix code: about their entropy
// (2.2 bits), not the 3 bits of their frame.
TEST(BucketData, PackedStepsCodeUnevenSteps) {
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<int64_t> walk;
    double value = 50;
    for (int i = 0; i < 1000; i++) {
        value = std::clamp(value + normal(rng), 0.0, 100.0);
        walk.push_back(static_cast<int64_t>(value));
    }
    std::string bytes = codec::packed_steps(walk).value();
    EXPECT_LT(bytes.size(), 999u * 24 / 80 + 20);
    ByteReader r(bytes);
    std::vector<int64_t> out = {-1};  // appended to
    codec::read_packed_deltas(r, walk.size(), out);
    EXPECT_EQ(std::vector<int64_t>(out.begin() + 1, out.end()), walk);
    EXPECT_EQ(r.remaining(), 0u);

    // Codes a writer cannot have produced are refused: payload of 5 values
    // (4 steps) in a frame of width 2, lengths for symbols 0..3.
    auto refused = [](std::vector<uint8_t> lengths, std::string stream, uint64_t bytes) {
        ByteWriter w;
        w.varint(0);       // first
        w.varint(0);       // base
        w.byte(0x80 | 2);  // coded, width 2
        w.varint(0);       // no exceptions
        w.byte(static_cast<uint8_t>(lengths[0] | lengths[1] << 4));
        w.byte(static_cast<uint8_t>(lengths[2] | lengths[3] << 4));
        w.varint(bytes);
        w.bytes(stream);
        std::string payload = w.take();
        ByteReader r(payload);
        std::vector<int64_t> ks;
        try {
            codec::read_packed_deltas(r, 5, ks);
        } catch (const Error &e) {
            return e.code() == ErrorCode::Corrupt;
        }
        return false;
    };
    // symbols 0 '0', 1 '10', 2 '11' (read least significant bit first)
    EXPECT_FALSE(refused({1, 2, 2, 0}, std::string("\x00", 1), 1));  // 0 0 0 0
    EXPECT_FALSE(refused({1, 2, 2, 0}, std::string("\xFF", 1), 1));  // 2 2 2 2
    EXPECT_TRUE(refused({1, 1, 1, 0}, std::string("\x00", 1), 1));   // over-subscribed
    EXPECT_TRUE(refused({1, 9, 2, 0}, std::string("\x00", 1), 1));   // too long a code
    EXPECT_TRUE(refused({1, 0, 0, 0}, std::string("\x02", 1), 1));   // '1' is no code
    EXPECT_TRUE(refused({1, 2, 2, 0}, std::string("\xFF", 1), 0));   // no stream
    EXPECT_FALSE(refused({2, 2, 2, 2}, std::string("\xFF", 1), 1));  // 3 3 3 3
    EXPECT_TRUE(refused({1, 3, 3, 2}, std::string("\xFF", 1), 1));   // 2 2 1 0: 10 bits
    EXPECT_TRUE(refused({1, 2, 2, 0}, std::string("\xFF", 1), 2));   // past the input

    // Codes of 8 bits over a stream of B bytes hold B steps, not the 8 B a
    // bit each would: the reader stops at the stream's end.
    ByteWriter w8;
    w8.varint(0);
    w8.varint(0);
    w8.byte(0x80 | 4);
    w8.varint(0);
    for (int pair = 0; pair < 8; pair++)
        w8.byte(0x88);
    w8.varint(4096);
    w8.bytes(std::string(4096, '\0'));
    std::string long_codes = w8.take();
    ByteReader r8(long_codes);
    std::vector<int64_t> out8;
    EXPECT_THROW(codec::read_packed_deltas(r8, 8 * 4096 + 1, out8), Error);
}

// Steps outside the frame that holds most of them are listed apart: a gap
// in the readings or a jump no longer widens every slot.
TEST(BucketData, PackedStepsPatchOutliers) {
    std::mt19937_64 rng(5);
    auto round_trip = [](const std::vector<int64_t> &ks) {
        std::optional<std::string> bytes = codec::packed_steps(ks);
        if (!bytes)
            return std::optional<size_t>();
        ByteReader r(*bytes);
        std::vector<int64_t> out;
        codec::read_packed_deltas(r, ks.size(), out);
        EXPECT_EQ(out, ks);
        EXPECT_EQ(r.remaining(), 0u);
        return std::optional<size_t>(bytes->size());
    };
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    std::vector<std::vector<int64_t>> cases = {
        {},
        {7},
        {7, 7},
        {0, kMax},
        {0, kMax, 0},
        {kMin, -1, kMin},
        {kMin, 0},
        {0, 100, 101, 102, 103},         // an outlier first
        {0, 1, 2, 3, 1000},              // and last
        {0, 1000, 0, 1000, 0, 1000, 0},  // all outliers of one frame
    };
    for (int c = 0; c < 200; c++) {
        std::vector<int64_t> ks;
        int64_t k = static_cast<int64_t>(rng() % 1000);
        size_t n = 1 + rng() % 300;
        for (size_t i = 0; i < n; i++) {
            uint64_t pick = rng() % 100;
            int64_t step = pick < 3   ? static_cast<int64_t>(rng() % 2000000) - 1000000
                           : pick < 4 ? static_cast<int64_t>(rng() >> 2) * (c % 2 ? 1 : -1)
                                      : static_cast<int64_t>(rng() % 5) - 2;
            k = static_cast<int64_t>(static_cast<uint64_t>(k) + static_cast<uint64_t>(step));
            ks.push_back(k);
        }
        cases.push_back(ks);
    }
    for (const std::vector<int64_t> &ks : cases)
        round_trip(ks);
    EXPECT_FALSE(codec::packed_steps({kMin, kMax}).has_value());  // a step beyond int64

    // Steps of -2..2 take 3 bits each, a few jumps of a million included.
    std::vector<int64_t> walk;
    for (int64_t i = 0, k = 0; i < 1000; i++) {
        k += i % 250 == 100 ? 1000000 : static_cast<int64_t>(rng() % 5) - 2;
        walk.push_back(k);
    }
    EXPECT_LT(*round_trip(walk), 999u * 3 / 8 + 30);
    // Times at 10 s with an hour missing: no bits per time, one exception.
    std::vector<int64_t> times;
    for (int64_t i = 0; i < 1000; i++)
        times.push_back(i * 10000000 + (i >= 500 ? int64_t{3600000000} : 0));
    EXPECT_LT(codec::packed_dates(times).value().size(), 24u);  // not 999 x 29 bits

    // Lists a writer cannot have produced are refused.
    auto refused = [](const std::string &bytes, uint64_t n) {
        ByteReader r(bytes);
        std::vector<int64_t> ks;
        try {
            codec::read_packed_deltas(r, n, ks);
        } catch (const Error &e) {
            return e.code() == ErrorCode::Corrupt;
        }
        return false;
    };
    auto payload = [](uint64_t exceptions, std::vector<uint64_t> gaps) {
        ByteWriter w;
        w.varint(0);  // first
        w.varint(0);  // base
        w.byte(0);    // width
        w.varint(exceptions);
        for (uint64_t gap : gaps) {
            w.varint(gap);
            w.varint(zigzag(1));
        }
        return w.take();
    };
    EXPECT_FALSE(refused(payload(2, {0, 1}), 4));
    EXPECT_TRUE(refused(payload(4, {0, 0, 0, 0}), 4));  // more exceptions than steps
    EXPECT_TRUE(refused(payload(1, {3}), 4));           // past the last step
    EXPECT_TRUE(refused(payload(2, {1, 1}), 4));        // the second past it
    EXPECT_TRUE(refused(payload(2, {0}), 4));           // a list cut short
}

// Display scales that a writer cannot have produced are refused.
TEST(BucketData, DisplayScalesAreChecked) {
    BucketData data;
    for (const char *text : {"1.50", "2.5", "3"}) {
        Value m = Value::object();
        m.add("t", Value::date(0));
        m.add("n", Value::number(text));
        data.append(m, 1);
    }
    std::string bytes = data.encode();
    // Flip every byte in turn: each damaged copy is refused or reads
    // numbers (the checksum guards the rest); none crashes.
    for (size_t i = 0; i + 4 < bytes.size(); i++) {
        std::string damaged = bytes;
        damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
        try {
            BucketData::decode(damaged);
        } catch (const Error &) {
        }
    }
}

// A bucket closed by size stays full through encode and decode, and the
// mark changes nothing else.
TEST(BucketData, FullMarkRoundTrips) {
    BucketData data;
    Value m = Value::object();
    m.add("n", Value::number(int64_t{7}));
    data.append(m, 16);
    EXPECT_FALSE(BucketData::decode(data.encode()).full());
    BucketData full = data;
    full.mark_full();
    BucketData back = BucketData::decode(full.encode());
    EXPECT_TRUE(back.full());
    EXPECT_EQ(back.count(), 1u);
    EXPECT_EQ(back.size(), 16u);
    EXPECT_TRUE(BucketData::decode(full.encode(), nullptr).full());
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
    for (int i = 0; i < 40000; i++) {
        std::string body = std::string("TSCB") + static_cast<char>(1 + i % 2);
        for (int n = rng() % 48; n > 0; n--)
            body.push_back(static_cast<char>(rng() % 4 == 0 ? rng() % 12 : rng()));
        uint32_t crc = crc32c(body);
        for (int k = 0; k < 4; k++)
            body.push_back(static_cast<char>(crc >> (8 * k)));
        try {
            BucketData::decode(body);
            std::vector<std::string> wanted = {"t"};
            BucketData::decode(body, &wanted,
                               BucketData::TimeWindow{"t", [](UnixMicros t) { return t >= 0; }});
            BucketData::decode_float8(body, "t", {"a", "b"});
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::Corrupt);
        }
    }
}

// Header, body, checksum: a well-framed encoding of hand-written bytes.
std::string framed(const std::string &body, char version = 1) {
    std::string bytes = std::string("TSCB") + version + body;
    uint32_t crc = crc32c(bytes);
    for (int k = 0; k < 4; k++)
        bytes.push_back(static_cast<char>(crc >> (8 * k)));
    return bytes;
}

void expect_corrupt(const std::string &body, const std::string &why, char version = 1) {
    try {
        BucketData::decode(framed(body, version));
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
    expect_corrupt(std::string("\x80\xd0\xac\xf3\x0e\x00\x00", 7), "more measurements than bits");
    // count 8 and no column
    expect_corrupt(std::string("\x08\x00\x00", 3), "no field is present");
    // one column "t", one string value 0xff
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x00\x06\x01\xff", 11), "not UTF-8");
    // a NUL inside a key
    expect_corrupt(std::string("\x01\x00\x01\x02t\x00\x01\x00\x00", 9), "not UTF-8");
    // a double NaN
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x00\x04\x00\x00\x00\x00\x00\x00\xf8\x7f", 16),
                   "not finite");
}

// Version 1, as sessions before the typed codecs wrote it, still reads:
// a column "t" of two dates, a sparse "v" with an integer and a double.
TEST(BucketData, Version1Reads) {
    std::string body(
        "\x02\x14\x02"                               // count 2, size 20, 2 columns
        "\x01t\x02"                                  // "t", 2 values
        "\x00\x07\xd0\x0f\x00\x07\x14"               // dates 1000, then +10
        "\x01v\x01"                                  // "v", 1 value
        "\x01\x04\x00\x00\x00\x00\x00\x00\x29\x40",  // at 1: 12.5
        26);
    BucketData data = BucketData::decode(framed(body));
    std::vector<Value> out = data.measurements();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(data.size(), 20u);
    EXPECT_EQ(out[0].find("t")->as_date(), 1000);
    EXPECT_EQ(out[1].find("t")->as_date(), 1010);
    EXPECT_EQ(out[0].find("v"), nullptr);
    EXPECT_EQ(out[1].find("v")->as_number().text, "12.5");
    Float8Columns float8 = BucketData::decode_float8(framed(body), "t", {"v"});
    EXPECT_EQ(float8.times, (std::vector<UnixMicros>{1000, 1010}));
    EXPECT_EQ(float8.fields[0].positions, std::vector<uint32_t>{1});
    EXPECT_EQ(float8.fields[0].numbers, std::vector<double>{12.5});
    // encoding it again writes version 2
    EXPECT_EQ(data.encode()[4], 2);
    EXPECT_EQ(BucketData::decode(data.encode()).encode(), data.encode());
}

// A bucket's state from stored data's outline is the state from its
// decoded measurements: count, size, fullness and schema.
TEST(BucketData, OutlineGivesTheStateOfTheData) {
    std::mt19937_64 rng(29);
    auto same = [](const BucketState &a, const BucketState &b) {
        return a.count() == b.count() && a.size() == b.size() && a.full() == b.full() &&
               a.schema_fingerprint() == b.schema_fingerprint();
    };
    for (int round = 0; round < 300; round++) {
        std::vector<Value> inserted;
        BucketData data = random_bucket(rng, inserted);
        if (round % 7 == 0)
            data.mark_full();
        std::string bytes = data.encode();
        BucketState decoded(0), outlined(0);
        decoded.add(BucketData::decode(bytes));
        outlined.add(BucketData::outline(bytes));
        ASSERT_TRUE(same(decoded, outlined)) << round;
        // And both as measurement by measurement.
        BucketState one_by_one(0);
        for (const Value &m : inserted)
            one_by_one.add(m, 100);
        if (data.full())
            one_by_one.mark_full();
        EXPECT_TRUE(same(one_by_one, outlined)) << round;
    }
    // Version 1 data is decoded whole.
    std::string v1(
        "\x02\x14\x02"
        "\x01t\x02"
        "\x00\x07\xd0\x0f\x00\x07\x14"
        "\x01v\x01"
        "\x01\x04\x00\x00\x00\x00\x00\x00\x29\x40",
        26);
    BucketState decoded(0), outlined(0);
    decoded.add(BucketData::decode(framed(v1)));
    outlined.add(BucketData::outline(framed(v1)));
    EXPECT_TRUE(same(decoded, outlined));
    EXPECT_EQ(outlined.count(), 2u);
}

// A version 2 column block must hold exactly what its head says.
TEST(BucketData, Version2BlocksAreChecked) {
    // "t": 1 value, block: dates codec, one date 5
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x03\x01\x0a\x00", 10), "trailing bytes", 2);
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x02\x0f\x0a", 9), "unknown column codec", 2);
    // more values than measurements, more measurements than bits of data
    // (beyond the largest bucket, which packed steps let take no bits)
    expect_corrupt(std::string("\x01\x00\x01\x01t\x02\x02\x01\x00", 9), "too many values", 2);
    expect_corrupt(std::string("\x80\x89\x7a\x00\x01\x01t\x01\x02\x01\x00", 11),
                   "more measurements than bits", 2);
    // a date whose varint runs past the block, or past 64 bits
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x02\x01\x80", 9), "unexpected end", 2);
    expect_corrupt(std::string("\x01\x00\x01\x01t\x01\x0c\x01", 8) + std::string(10, '\x80') +
                       std::string("\x00", 1),
                   "varint too long", 2);
    // an XOR double that is NaN
    expect_corrupt(
        std::string("\x01\x00\x01\x01t\x01\x0a\x04\x08\x7f\xf8\x00\x00\x00\x00\x00\x00", 17),
        "not finite", 2);
}

// Readings at regular intervals, kept to two decimals, take a byte or two
// a value: the time and number codecs are chosen.
TEST(BucketData, RegularReadingsAreCompact) {
    BucketData data;
    double walk = 50;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 360; i++) {
        walk = std::round((walk + static_cast<double>(rng() % 201) / 100 - 1) * 100) / 100;
        Value m = Value::object();
        m.add("t", Value::date(1600000000000000 + i * 10000000LL));
        m.add("_id", Value::objectid(ObjectId::generate(1600000000 + i * 10)));
        m.add("usage", Value::number(shortest_text(walk)));
        data.append(m, 50);
    }
    std::string bytes = data.encode();
    EXPECT_LT(bytes.size(), 360u * 6) << "time 1, _id 3, usage 2 bytes each at most";
    EXPECT_EQ(BucketData::decode(bytes).encode(), bytes);
}

// A decode with a time window builds, in the columns after the time
// column, exactly the measurements within it, and with a row mask, in every
// column but the time column, only the rows the mask keeps; dates in the
// columns keep their delta chain across the ones it passes over.
TEST(BucketData, TimeWindowKeepsTheMeasurementsWithinIt) {
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
        UnixMicros until = round % 3 == 0 ? INT64_MAX : since + rng() % 1000000000;
        auto within = [&](UnixMicros t) { return t >= since && t < until; };
        std::vector<std::string> wanted = {"t", "d", "f0", "f3", "f5", "typed1", "typed4"};
        std::vector<bool> rows(inserted.size(), true);
        if (round % 4 >= 2)
            for (size_t i = 0; i < rows.size(); i++)
                rows[i] = rng() % 3 != 0;
        BucketData windowed = BucketData::decode(
            bytes, &wanted, BucketData::TimeWindow{"t", within, round % 4 >= 2 ? &rows : nullptr});
        for (const BucketColumn &c : windowed.columns()) {
            bool after_time = c.name != "d" && c.name != "t";
            size_t j = 0;
            for (uint32_t pos = 0; pos < inserted.size(); pos++) {
                const Value *v = inserted[pos].find(c.name);
                bool in_window = within(inserted[pos].find("t")->as_date());
                if (v == nullptr || (after_time && !in_window) || (c.name != "t" && !rows[pos]))
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
        std::vector<std::string> fields = {"f0",     "f3",     "f5",     "absent", "typed0",
                                           "typed1", "typed2", "typed3", "typed4"};
        Float8Columns float8 = BucketData::decode_float8(bytes, "t", fields);
        ASSERT_EQ(float8.times.size(), inserted.size());
        for (size_t i = 0; i < inserted.size(); i++)
            EXPECT_EQ(float8.times[i], inserted[i].find("t")->as_date());
        for (size_t f = 0; f < fields.size(); f++) {
            const Float8Column &c = float8.fields[f];
            const BucketColumn *e = nullptr;
            for (const BucketColumn &column : exact.columns())
                e = column.name == fields[f] ? &column : e;
            ASSERT_EQ(c.size(), e != nullptr ? e->positions.size() : 0u) << fields[f];
            EXPECT_EQ(c.dense, c.size() > 0 && c.size() == inserted.size()) << fields[f];
            EXPECT_EQ(c.positions.size(), c.dense ? 0 : c.size()) << fields[f];
            size_t other = 0;
            for (size_t i = 0; i < c.size(); i++) {
                EXPECT_EQ(c.dense ? i : c.positions[i], e->positions[i]);
                const Value &v = e->values[i];
                bool is_other = other < c.others.size() && c.others[other].first == i;
                if (is_other) {
                    EXPECT_EQ(compare_values(c.others[other++].second, v), 0);
                } else {
                    ASSERT_TRUE(v.is(Value::Kind::Number));
                    EXPECT_EQ(c.number(i), v.as_number().float8().value());
                }
            }
            EXPECT_EQ(other, c.others.size());
        }
    }
}

// Decimals in a frame of reference: constant columns, negative values, a
// span of 53 bits and the largest scale read back bit for bit, each
// position on its own, and the packed form is chosen where it is smaller.
TEST(BucketData, PackedDecimalsReadEachValueAlone) {
    std::vector<std::vector<std::string>> columns = {
        std::vector<std::string>(300, "42.5"),
        {},
        {"0.5"},
        {},
        {"1e300", "2e300"},  // exact integers beyond 2^53: XOR, not decimals
    };
    // k = -+(2^52 - 1), 53 bits apart, then k anywhere between: steps
    // spread wider than the values
    columns[2] = {"-450359962737049.5", "450359962737049.5"};
    std::mt19937_64 random(7);
    for (int i = 0; i < 20; i++) {
        for (const char *text : {"-0.01", "-7.25", "3.5", "0.75", "-100.125"})
            columns[1].push_back(text);
        // k = 10 m + 5 at scale 1: the reading m.5 (or -m.5)
        int64_t m = static_cast<int64_t>(random() % 450359962737049);
        columns[2].push_back((random() % 2 ? "-" : "") + std::to_string(m) + ".5");
    }
    for (int k = 0; k < 30; k++)
        columns[3].push_back(std::to_string(k * k * 7 % 30) + "e-18");
    for (const std::vector<std::string> &texts : columns) {
        BucketData data;
        for (size_t i = 0; i < texts.size(); i++) {
            Value m = Value::object();
            m.add("t", Value::date(static_cast<int64_t>(i)));
            m.add("v", Value::number(texts[i]));
            data.append(m, 10);
        }
        std::string bytes = data.encode();
        std::vector<Value> out = BucketData::decode(bytes).measurements();
        Float8Columns float8 = BucketData::decode_float8(bytes, "t", {"v"});
        const Float8Column &c = float8.fields[0];
        for (size_t i = texts.size(); i-- > 0;) {
            EXPECT_EQ(compare_numbers(out[i].find("v")->as_number().text, texts[i]), 0) << texts[i];
            EXPECT_EQ(c.number(i), std::strtod(texts[i].c_str(), nullptr)) << texts[i];
        }
        EXPECT_EQ(c.packed.has_value(), texts.size() != 2) << texts[0];
        EXPECT_EQ(BucketData::decode(bytes).encode(), bytes);
    }
    // 300 equal readings take no bits: the column is its scale, base and width
    BucketData constant;
    for (int i = 0; i < 300; i++) {
        Value m = Value::object();
        m.add("t", Value::date(i));
        m.add("v", Value::number(std::string("42.5")));
        constant.append(m, 10);
    }
    EXPECT_LT(constant.encode().size(), 300u + 40u);
}

TEST(BucketData, PackedDecimalsAreChecked) {
    // "t": 1 date; "v": 1 packed decimal, scale 0, base 0, width 56
    std::string head("\x01\x00\x02\x01t\x01\x02\x01\x0a\x01v\x01", 12);
    expect_corrupt(head + std::string("\x05\x06\x00\x00\x38\x00", 6), "out of range", 2);
    // width 16 with one byte of bits
    expect_corrupt(head + std::string("\x05\x06\x00\x00\x10\x00", 6), "beyond the end", 2);
    // scale 19
    expect_corrupt(head + std::string("\x05\x06\x13\x00\x01\x00", 6), "decimal scale", 2);
    // a base beyond 2^53
    expect_corrupt(head + std::string("\x0d\x06\x00\x80\x80\x80\x80\x80\x80\x80\x80\x02"
                                      "\x01\x00",
                                      14),
                   "out of range", 2);
}

TEST(BucketData, ExtremeDatesFormatWithoutOverflow) {
    EXPECT_EQ(format_canonical_date(INT64_MIN).rfind("-2", 0), 0u);
    EXPECT_EQ(format_canonical_date(INT64_MAX).rfind("+2", 0), 0u);
}

// A cursor finds each position's entry, whether it steps or skips ahead,
// in dense and sparse columns, numbers and other values.
TEST(Float8Cursor, FindsPositionsSteppingOrSkipping) {
    Float8Column dense;
    dense.positions = {0, 1, 2, 3, 4};
    dense.numbers = {10, 11, 0, 13, 14};
    dense.others = {{2, Value::string("x")}};
    Float8Column sparse;
    sparse.positions = {1, 3, 4};
    sparse.numbers = {21, 0, 24};
    sparse.others = {{1, Value::string("y")}};
    for (const std::vector<uint32_t> &visits :
         {std::vector<uint32_t>{0, 1, 2, 3, 4}, std::vector<uint32_t>{1, 4},
          std::vector<uint32_t>{2, 3}, std::vector<uint32_t>{4, 5}}) {
        Float8Cursor d(dense), s(sparse);
        for (uint32_t p : visits) {
            Float8Cursor::Entry e = d.at(p);
            EXPECT_EQ(e.present, p < 5) << p;
            EXPECT_EQ(e.other != nullptr, p == 2) << p;
            if (e.present && e.other == nullptr) {
                EXPECT_EQ(e.number, 10 + p);
            }
            e = s.at(p);
            EXPECT_EQ(e.present, p == 1 || p == 3 || p == 4) << p;
            EXPECT_EQ(e.other != nullptr, p == 3) << p;
            if (e.present && e.other == nullptr) {
                EXPECT_EQ(e.number, 20 + p);
            }
        }
    }
}

}  // namespace
}  // namespace tscoll
