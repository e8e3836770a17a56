// The bucketing rules of SPEC §4.1 and the value semantics behind them.
#include "core/bucket.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/compare.hpp"
#include "core/error.hpp"
#include "core/number.hpp"

namespace tscoll {
namespace {

constexpr int64_t kSecond = 1000000;

Value obj(std::initializer_list<std::pair<const char *, Value>> members) {
    Value o = Value::object();
    for (const auto &[k, v] : members)
        o.add(k, v);
    return o;
}

Value num(const char *text) {
    return Value::number(std::string(text));
}

Measurement at(int64_t seconds, Value extra = Value::object(), uint64_t size = 50) {
    Value fields = obj({{"t", Value::date(seconds * kSecond)}});
    for (const Member &m : extra.as_object())
        fields.add(m.key, m.value);
    return Measurement{seconds * kSecond, fields, size};
}

TEST(Number, CompareByValue) {
    EXPECT_EQ(compare_numbers("12", "12.0"), 0);
    EXPECT_EQ(compare_numbers("1e-7", "0.0000001"), 0);
    EXPECT_LT(compare_numbers("-5", "-4.99"), 0);
    EXPECT_LT(compare_numbers("123456789012345678901234567890", "1.2345678901234568e29"), 0);
    EXPECT_LT(compare_numbers("0", "0.0001"), 0);
    EXPECT_GT(compare_numbers("0", "-0.0001"), 0);
    EXPECT_EQ(compare_numbers("-0", "0"), 0);
    EXPECT_LT(compare_numbers("99", "100"), 0);
    EXPECT_EQ(compare_numbers("-0.0", "0"), 0);
    EXPECT_EQ(compare_numbers("007.50", "7.5"), 0);
    EXPECT_LT(compare_numbers("0.25", "0.5"), 0);
    EXPECT_LT(compare_numbers("-0.5", "-0.25"), 0);
}

// An integer and a double compare as machine numbers below 2^53 and by
// their texts above: both ways must agree with the texts' order, also
// where an integer rounds to the double it is compared with (int64's
// largest, 2^63 - 1, to 2^63).
TEST(Number, IntegerAgainstDoubleAgreesWithTexts) {
    std::vector<std::string> texts = {"0",
                                      "1",
                                      "-1",
                                      "49",
                                      "49.6",
                                      "50",
                                      "-0.5",
                                      "0.1",
                                      "9007199254740991",
                                      "9007199254740992",
                                      "9007199254740993",
                                      "9007199254740991.5",
                                      "4503599627370495.5",
                                      "4503599627370496",
                                      "1152921504606846976",
                                      "1152921504606846990",
                                      "1.152921504606847e18",
                                      "-1152921504606846990",
                                      "-1.152921504606847e18",
                                      "9223372036854775807",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "-9223372036854775808",
                                      "9.3e18",
                                      "1e300"};
    for (const std::string &a : texts)
        for (const std::string &b : texts) {
            int expected = compare_numbers(a, b);
            EXPECT_EQ(compare_values(Value::number(a), Value::number(b)), expected)
                << a << " against " << b;
        }
}

// Numbers without an exponent compare in place; with one, through Decimal.
// Both ways must agree.
TEST(Number, ComparePlainAgreesWithDecimal) {
    std::mt19937_64 random(8);
    auto text = [&] {
        static const char *const kForms[] = {"0",      "-0",      "00",         "0.0",   "1",
                                             "10",     "-10",     "9.5",        "09.50", "0.05",
                                             "-0.050", "123.456", "123.4560001"};
        std::string t = kForms[random() % 13];
        if (random() % 2)
            t += std::to_string(random() % 100);
        return t;
    };
    for (int i = 0; i < 20000; i++) {
        std::string a = text(), b = text();
        EXPECT_EQ(compare_numbers(a, b), compare_numbers(a + "e0", b)) << a << " vs " << b;
        EXPECT_EQ(compare_numbers(a, b), -compare_numbers(b, a + "e0")) << a << " vs " << b;
    }
}

TEST(Number, BsonType) {
    EXPECT_EQ(bson_number_type("12"), BsonNumber::Int32);
    EXPECT_EQ(bson_number_type("-2147483648"), BsonNumber::Int32);
    EXPECT_EQ(bson_number_type("2147483648"), BsonNumber::Int64);
    EXPECT_EQ(bson_number_type("12.5"), BsonNumber::Double);
    EXPECT_EQ(bson_number_type("0.1"), BsonNumber::Double);
    EXPECT_EQ(bson_number_type("1e-7"), BsonNumber::Double);
    EXPECT_EQ(bson_number_type("123456789012345678901234567890"), BsonNumber::Decimal128);
    EXPECT_EQ(bson_number_type("0.10000000000000000001"), BsonNumber::Decimal128);
    EXPECT_EQ(exact_int64("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(exact_int64("9223372036854775808"), std::nullopt);
    EXPECT_EQ(exact_int64("-9223372036854775808"), INT64_MIN);
}

// exact_double's shortcut (at most 15 significant digits, normal range)
// must agree with the round trip through the shortest text it skips.
TEST(Number, ExactDoubleMatchesRoundTrip) {
    auto round_trip = [](const std::string &text) -> std::optional<double> {
        double d = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(d) || compare_numbers(text, shortest_text(d)) != 0)
            return std::nullopt;
        return d;
    };
    std::mt19937_64 random(15);
    std::vector<std::string> texts = {"0",
                                      "-0",
                                      "0.1",
                                      "5e-324",
                                      "2.2250738585072014e-308",
                                      "1e-300",
                                      "1e-301",
                                      "1.7976931348623157e308",
                                      "1e300",
                                      "9.99999999999999e300",
                                      "123456789012345",
                                      "1234567890123456",
                                      "0.30000000000000004",
                                      "0.3000000000000001"};
    for (int i = 0; i < 40000; i++) {
        int digits = 1 + static_cast<int>(random() % 17);
        // Half of them near 1e15, where shortest_text turns to fixed notation.
        int exponent =
            i % 2 ? static_cast<int>(random() % 640) - 320 : 10 + static_cast<int>(random() % 10);
        double mantissa = 1 + static_cast<double>(random() % 1000000007) / 1000000007 * 9;
        char text[64];
        std::snprintf(text, sizeof text, "%.*e", digits - 1, mantissa * std::pow(10.0, exponent));
        texts.push_back(text);
    }
    for (const std::string &text : texts) {
        std::optional<double> expected = round_trip(text);
        std::optional<double> got = exact_double(text);
        ASSERT_EQ(got.has_value(), expected.has_value()) << text;
        if (got) {
            EXPECT_EQ(std::memcmp(&*got, &*expected, sizeof(double)), 0) << text;
        }
    }
    EXPECT_EQ(exact_int64("12e3"), 12000);
    EXPECT_EQ(exact_int64("1e19"), std::nullopt);
    EXPECT_EQ(exact_number("12e3").integer, 12000);
    EXPECT_EQ(exact_number("12.5").real, 12.5);
    EXPECT_FALSE(exact_number("0.10000000000000000001").real.has_value());
}
// exact_number reads plain texts (-?digits(.digits)?, at most 15
// significant digits) in place: it must agree with exact_int64 and
// exact_double, which go through a Decimal, on those and on their
// neighbours just past the shortcut.
TEST(Number, ExactNumberOfPlainTextsMatchesDecimal) {
    std::mt19937_64 random(27);
    std::vector<std::string> texts = {"0",
                                      "-0",
                                      "0.0",
                                      "-0.000",
                                      "1.0",
                                      "10",
                                      "-1.50",
                                      "0.001",
                                      "00012",
                                      "123456789012345678",
                                      "1234567890123456789",
                                      "-999999999999999999",
                                      "0.123456789012345",
                                      "0.1234567890123456",
                                      "123456789.012345",
                                      "1234567890.123456",
                                      ".5",
                                      "5.",
                                      "-",
                                      "1.2.3",
                                      "+1",
                                      "1e5",
                                      ""};
    for (int i = 0; i < 40000; i++) {
        std::string text = random() % 4 == 0 ? "-" : "";
        int whole = static_cast<int>(random() % 21);
        int fraction = static_cast<int>(random() % 21);
        for (int k = 0; k < whole; k++)
            text +=
                static_cast<char>('0' + (k == 0 && whole > 1 ? random() % 2 * 7 : random() % 10));
        if (whole == 0)
            text += '0';
        if (fraction > 0) {
            text += '.';
            for (int k = 0; k < fraction; k++)
                text += static_cast<char>('0' + (random() % 3 == 0 ? 0 : random() % 10));
        }
        texts.push_back(text);
    }
    for (const std::string &text : texts) {
        ExactNumber got = exact_number(text);
        std::optional<int64_t> integer = exact_int64(text);
        std::optional<double> real = integer ? std::nullopt : exact_double(text);
        EXPECT_EQ(got.integer, integer) << text;
        ASSERT_EQ(got.real.has_value(), real.has_value()) << text;
        if (real) {
            EXPECT_EQ(std::memcmp(&*got.real, &*real, sizeof(double)), 0) << text;
        }
    }
}

// Numbers whose texts are exactly integers or doubles compare as machine
// numbers (Number::exact, worked out once): the order must be their texts'.
TEST(Compare, NumbersAsMachineValuesAgreeWithTheirTexts) {
    std::mt19937_64 random(34);
    auto text = [&] {
        static const char *const kForms[] = {"0",      "-0",
                                             "0.0",    "1",
                                             "10",     "-10",
                                             "9.5",    "0.05",
                                             "-0.050", "123.456",
                                             "1e300",  "1e-300",
                                             "12e3",   "0.1000000000000000055511151231257827"};
        std::string t = kForms[random() % 14];
        if (random() % 2 && t.find('e') == std::string::npos)
            t += std::to_string(random() % 1000);
        return t;
    };
    auto value = [&](const std::string &t) {
        switch (random() % 3) {
            case 0:
                return Value::number(t);
            case 1:
                if (std::optional<double> d = exact_double(t))
                    return Value::real(*d);
                return Value::number(t);
            default:
                if (std::optional<int64_t> i = exact_int64(t))
                    return Value::number(*i);
                return Value::number(t);
        }
    };
    for (int i = 0; i < 20000; i++) {
        std::string a = text(), b = text();
        Value x = value(a), y = value(b);
        EXPECT_EQ(compare_values(x, y), compare_numbers(a, b)) << a << " vs " << b;
        // Asked again, from the forms worked out by the first comparison.
        EXPECT_EQ(compare_values(y, x), compare_numbers(b, a)) << a << " vs " << b;
    }
}

TEST(Compare, TypeOrder) {
    // null < number < string < object < array < objectid < boolean < date
    std::vector<Value> ordered = {Value::null(),         num("1e9"),
                                  Value::string(""),     Value::object(),
                                  Value::array(),        Value::objectid(ObjectId{}),
                                  Value::boolean(false), Value::date(-5)};
    for (size_t i = 0; i + 1 < ordered.size(); i++)
        EXPECT_LT(compare_values(ordered[i], ordered[i + 1]), 0) << i;
}

TEST(Compare, BsonSizes) {
    // {"_id": ObjectId, "t": Date, "a": 1}: 4 + (1+4+12) + (1+2+8) + (1+2+4) + 1
    Value doc = obj({{"_id", Value::objectid(ObjectId{})}, {"t", Value::date(0)}, {"a", num("1")}});
    EXPECT_EQ(bson_document_size(doc), 40u);
    EXPECT_EQ(bson_document_size(doc, "a"), 33u);
    EXPECT_EQ(bson_value_size(Value::string("abc")), 8u);
    EXPECT_EQ(bson_value_size(Value::array({num("1"), num("2.5")})), 4 + 3 + 4 + 3 + 8 + 1u);
    EXPECT_EQ(nesting_depth(obj({{"a", obj({{"b", Value::array()}})}})), 3u);
}

TEST(Summary, ElementWiseMinMax) {
    Value min = Value::object(), max = Value::object();
    Value a = obj({{"x", num("5")},
                   {"o", obj({{"p", num("1")}, {"q", Value::string("b")}})},
                   {"arr", Value::array({num("3"), num("9")})}});
    Value b = obj({{"x", num("-2")},
                   {"o", obj({{"p", num("7")}, {"q", Value::string("a")}})},
                   {"arr", Value::array({num("4"), num("1"), num("0")})},
                   {"y", Value::boolean(true)}});
    for (const Value *v : {&a, &b}) {
        fold_min(min, *v);
        fold_max(max, *v);
    }
    EXPECT_EQ(compare_values(min, obj({{"x", num("-2")},
                                       {"o", obj({{"p", num("1")}, {"q", Value::string("a")}})},
                                       {"arr", Value::array({num("3"), num("1"), num("0")})},
                                       {"y", Value::boolean(true)}})),
              0);
    EXPECT_EQ(compare_values(max, obj({{"x", num("5")},
                                       {"o", obj({{"p", num("7")}, {"q", Value::string("b")}})},
                                       {"arr", Value::array({num("4"), num("9"), num("0")})},
                                       {"y", Value::boolean(true)}})),
              0);
}

TEST(Summary, MixedTypesUseTypeOrder) {
    Value min = obj({{"v", num("3")}}), max = obj({{"v", num("3")}});
    fold_min(min, obj({{"v", Value::string("s")}}));
    fold_max(max, obj({{"v", Value::string("s")}}));
    EXPECT_TRUE(min.find("v")->is(Value::Kind::Number));
    EXPECT_TRUE(max.find("v")->is(Value::Kind::String));
}

TEST(Schema, TypeClassesPerLevel) {
    Schema s;
    s.add(obj({{"a", num("1")},
               {"o", obj({{"b", Value::string("x")}})},
               {"arr", Value::array({num("1")})}}));
    EXPECT_TRUE(s.compatible(obj({{"a", num("2.5")}})));               // all numbers are one class
    EXPECT_TRUE(s.compatible(obj({{"z", Value::boolean(true)}})));     // new field
    EXPECT_FALSE(s.compatible(obj({{"a", Value::string("1")}})));      // number -> string
    EXPECT_FALSE(s.compatible(obj({{"a", Value::null()}})));           // null is its own class
    EXPECT_FALSE(s.compatible(obj({{"o", obj({{"b", num("1")}})}})));  // nested
    EXPECT_FALSE(s.compatible(obj({{"arr", Value::array({Value::string("1")})}})));
    EXPECT_TRUE(s.compatible(obj({{"arr", Value::array({num("1"), Value::string("new index")})}})));
}

// A Known measurement is one whose add() would leave the schema as it is:
// the insert path skips that walk.
TEST(Schema, FitTellsKnownFromNew) {
    Schema s;
    Value first = obj({{"a", num("1")},
                       {"o", obj({{"b", Value::string("x")}})},
                       {"arr", Value::array({num("1"), Value::null()})}});
    s.add(first);
    uint64_t before = s.fingerprint();
    using Fit = Schema::Fit;
    std::vector<std::pair<Value, Fit>> cases = {
        {obj({{"a", num("2")}}), Fit::Known},
        {obj({{"o", obj({{"b", Value::string("y")}})}, {"a", num("3")}}), Fit::Known},
        {obj({{"arr", Value::array({num("5")})}}), Fit::Known},
        {Value::object(), Fit::Known},
        {obj({{"z", num("1")}}), Fit::New},
        {obj({{"o", obj({{"c", num("1")}})}}), Fit::New},
        {obj({{"arr", Value::array({num("1"), Value::null(), num("3")})}}), Fit::New},
        // A conflict anywhere wins over a new field before it.
        {obj({{"z", num("1")}, {"a", Value::string("1")}}), Fit::Conflict},
        {obj({{"arr", Value::array({num("1"), num("2")})}}), Fit::Conflict},
    };
    for (const auto &[measurement, expected] : cases) {
        EXPECT_EQ(s.fit(measurement), expected) << to_json_text(measurement);
        if (expected == Fit::Known) {
            Schema added = s;
            added.add(measurement);
            EXPECT_EQ(added.fingerprint(), before) << to_json_text(measurement);
        }
    }
    Schema fresh;
    EXPECT_EQ(fresh.fit(first), Fit::New);
}

// A stored bucket's state is read column by column: the rollover
// decisions must be those of the state built measurement by measurement.
TEST(Schema, StateFromColumnsDecidesAsFromMeasurements) {
    std::vector<Value> measurements = {
        obj({{"t", Value::date(1)}, {"a", num("1")}, {"o", obj({{"b", Value::string("x")}})}}),
        obj({{"t", Value::date(2)}, {"arr", Value::array({num("1"), Value::null()})}}),
        obj({{"t", Value::date(3)}, {"o", obj({{"c", Value::boolean(true)}})}, {"a", num("2")}}),
        obj({{"t", Value::date(4)}, {"arr", Value::array({num("3")})}})};
    BucketState by_measurement(0);
    BucketData data;
    for (const Value &m : measurements) {
        by_measurement.add(m, 40);
        data.append(m, 40);
    }
    BucketState by_column(0);
    by_column.add(BucketData::decode(data.encode()));
    EXPECT_EQ(by_column.count(), by_measurement.count());
    EXPECT_EQ(by_column.size(), by_measurement.size());
    BucketingLimits limits;
    std::vector<Value> probes = {
        obj({{"a", num("5")}}),
        obj({{"a", Value::string("5")}}),
        obj({{"o", obj({{"b", num("1")}})}}),
        obj({{"o", obj({{"c", Value::boolean(false)}, {"b", Value::string("y")}})}}),
        obj({{"o", num("1")}}),
        obj({{"arr", Value::array({num("1"), Value::string("n")})}}),
        obj({{"arr", Value::array({num("1"), Value::null(), Value::string("new")})}}),
        obj({{"new", Value::array()}})};
    for (const Value &probe : probes) {
        Measurement m{5, probe, 40};
        EXPECT_EQ(by_column.decide(m, limits).reason, by_measurement.decide(m, limits).reason)
            << to_json_text(probe);
    }
    EXPECT_EQ(by_column.decide(Measurement{5, probes[1], 40}, limits).reason,
              Rollover::SchemaChange);
    // The fingerprint ignores the order fields were seen in, and changes
    // with a new field or element, not with more values of known ones.
    EXPECT_EQ(by_column.schema_fingerprint(), by_measurement.schema_fingerprint());
    uint64_t before = by_measurement.schema_fingerprint();
    by_measurement.add(obj({{"t", Value::date(6)}, {"a", num("7")}}), 40);
    EXPECT_EQ(by_measurement.schema_fingerprint(), before);
    by_measurement.add(obj({{"t", Value::date(7)}, {"o", obj({{"d", num("1")}})}}), 40);
    EXPECT_NE(by_measurement.schema_fingerprint(), before);
    before = by_measurement.schema_fingerprint();
    by_measurement.add(obj({{"arr", Value::array({num("1"), Value::null(), num("2")})}}), 40);
    EXPECT_NE(by_measurement.schema_fingerprint(), before);
}

// A bucket summarises its fields column by column when its control is
// asked for: the same control.min and max, member order included, as
// folding measurement by measurement, also for fields whose type changes.
TEST(Summary, ColumnWiseAsMeasurementWise) {
    std::vector<Value> measurements = {
        obj({{"t", Value::date(1)}, {"a", num("1.50")}, {"o", obj({{"b", Value::string("x")}})}}),
        obj({{"t", Value::date(2)}, {"arr", Value::array({num("1"), Value::null()})}}),
        obj({{"t", Value::date(3)}, {"o", obj({{"c", Value::boolean(true)}})}, {"a", num("1.5")}}),
        obj({{"t", Value::date(4)}, {"arr", Value::array({num("3")})}, {"a", Value::string("s")}}),
        obj({{"t", Value::date(5)}, {"o", num("7")}, {"a", num("-1e3")}})};
    Bucket bucket(ObjectId{}, 0, "t");
    Value min = Value::object(), max = Value::object();
    for (const Value &m : measurements) {
        bucket.append(Measurement{m.find("t")->as_date(), m, 40});
        fold_min(min, m);
        fold_max(max, m);
    }
    Value control = bucket.control();
    min.as_object()[0].value = Value::string("1970-01-01T00:00:00.000Z");
    max.as_object()[0].value = Value::string(format_canonical_date(5));
    EXPECT_EQ(to_json_text(*control.find("min")), to_json_text(min));
    EXPECT_EQ(to_json_text(*control.find("max")), to_json_text(max));
}

// A column of numbers (or dates) is folded by comparing machine values where it can be:
// the summary must be the value, and the spelling, that folding value by
// value keeps (the first of equals), whatever the column mixes.
TEST(Summary, NumberColumnFoldsAsValueByValue) {
    const std::vector<std::string> texts = {"50",    "50.0", "49.99", "-0",  "0",
                                            "0.0",   "1e2",  "100",   "7.5", "9007199254740993",
                                            "1e300", "-2.5", "3"};
    std::mt19937_64 random(11);
    for (int round = 0; round < 500; round++) {
        std::vector<Value> column;
        size_t n = 1 + random() % 12;
        for (size_t i = 0; i < n; i++) {
            if (round % 5 == 4 && random() % 4 == 0)
                column.push_back(Value::string("s"));
            else if (round % 3 == 2)  // dates, some rounds with a number among them
                column.push_back(round % 7 == 0 && random() % 4 == 0
                                     ? Value::number("1")
                                     : Value::date(static_cast<int64_t>(random() % 5) - 2));
            else
                column.push_back(Value::number(texts[random() % texts.size()]));
        }
        Value start = Value::object();
        if (round % 2 == 1)
            start.add("v", Value::number(texts[random() % texts.size()]));
        Value min = start, max = start, min_by_value = start, max_by_value = start;
        fold_min(min, "v", column);
        fold_max(max, "v", column);
        for (const Value &v : column) {
            fold_min(min_by_value, obj({{"v", v}}));
            fold_max(max_by_value, obj({{"v", v}}));
        }
        ASSERT_EQ(to_json_text(min), to_json_text(min_by_value)) << round;
        ASSERT_EQ(to_json_text(max), to_json_text(max_by_value)) << round;
    }
}

TEST(Bucketing, RoundingBefore1970AndAfter2106) {
    EXPECT_EQ(bucket_start(59 * kSecond + 999999, 60), 0);
    EXPECT_EQ(bucket_start(-1, 60), -60 * kSecond);
    EXPECT_EQ(bucket_start(-60 * kSecond, 60), -60 * kSecond);
    EXPECT_EQ(bucket_start(-61 * kSecond, 3600), -3600 * kSecond);
    EXPECT_EQ(bucket_start((4294967296 + 86399) * kSecond, 86400), 4295030400 * kSecond);
}

TEST(Bucketing, RulesInMongoOrder) {
    BucketingLimits limits;  // seconds granularity: span 3600, rounding 60
    limits.max_count = 3;
    Bucket b(ObjectId{}, 0, "t");
    b.append(at(10));
    EXPECT_EQ(b.decide(at(3599), limits).reason, Rollover::None);
    EXPECT_EQ(b.decide(at(3600), limits).reason, Rollover::TimeForward);
    EXPECT_EQ(b.decide(at(-1), limits).reason, Rollover::TimeBackward);
    // Time is checked before the schema and the count.
    b.append(at(11));
    b.append(at(12));
    EXPECT_EQ(b.decide(at(13), limits).reason, Rollover::Count);
    EXPECT_EQ(b.decide(at(4000, obj({{"x", Value::string("s")}})), limits).reason,
              Rollover::TimeForward);
}

TEST(Bucketing, SizeAndLargeMeasurements) {
    BucketingLimits limits;
    limits.max_size = 1000;
    limits.min_count = 2;
    Bucket b(ObjectId{}, 0, "t");
    // Under min_count, a bucket over the size limit stays open up to 12 MiB.
    auto d = b.decide(at(1, Value::object(), 1500), limits);
    EXPECT_EQ(d.reason, Rollover::None);
    EXPECT_TRUE(d.kept_open_for_large_measurements);
    b.append(at(1, Value::object(), 1500));
    b.append(at(2, Value::object(), 10));
    EXPECT_EQ(b.decide(at(3, Value::object(), 10), limits).reason, Rollover::Size);
    Bucket small(ObjectId{}, 0, "t");
    EXPECT_EQ(small.decide(at(1, Value::object(), 13 * 1024 * 1024), limits).reason,
              Rollover::Size);
}

TEST(Bucketing, SchemaChangeAndControl) {
    BucketingLimits limits;
    Bucket b(ObjectId{}, 60 * kSecond, "t");
    b.append(at(61, obj({{"x", num("1")}})));
    b.append(at(75, obj({{"x", num("-3")}, {"y", Value::string("a")}})));
    EXPECT_EQ(b.decide(at(80, obj({{"x", Value::boolean(true)}})), limits).reason,
              Rollover::SchemaChange);
    Value control = b.control();
    // The rounded start and the true latest time.
    EXPECT_EQ(control.find("min")->find("t")->as_string(), "1970-01-01T00:01:00.000Z");
    EXPECT_EQ(control.find("max")->find("t")->as_string(), "1970-01-01T00:01:15.000Z");
    EXPECT_EQ(control.find("min")->find("x")->as_number().text, "-3");
    EXPECT_EQ(control.find("max")->find("y")->as_string(), "a");
    EXPECT_EQ(control.find("count")->as_exact_int64(), 2);
}

// A bucket packed between appends (a statement carrying it across
// flushes) encodes, counts and summarises as one never packed.
TEST(Bucketing, PackedBucketEncodesTheSame) {
    Bucket whole(ObjectId{}, 0, "t"), packed(ObjectId{}, 0, "t");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 7; i++) {
            int64_t second = round * 7 + i;
            Measurement m =
                at(second, obj({{"x", Value::number(std::to_string(second % 5) + ".50")},
                                {"s", Value::string(round == 1 ? "b" : "a")}}));
            whole.append(m);
            packed.append(m);
        }
        packed.pack();
        packed.pack();  // nothing new: a no-op
    }
    // a field new in the last run, a kind change, a sparse column
    for (Bucket *b : {&packed, &whole})
        b->append(at(30, obj({{"x", Value::string("n/a")}, {"late", num("2.50")}})));
    whole.mark_full();
    packed.mark_full();
    EXPECT_EQ(packed.encode(), whole.encode());
    EXPECT_EQ(packed.count(), 22u);
    EXPECT_EQ(packed.state().size(), whole.state().size());
    EXPECT_EQ(compare_values(packed.control(), whole.control()), 0);
    EXPECT_GT(packed.packed_bytes(), 0u);
    EXPECT_EQ(BucketData::decode(packed.encode()).measurements().size(), 22u);
}

// The same with numbers only, which Bucket::encode writes from the packed
// runs' codecs (core/bucket_fold.hpp) rather than from values.
TEST(Bucketing, PackedBucketOfNumbersEncodesTheSame) {
    Bucket whole(ObjectId{}, 0, "t"), packed(ObjectId{}, 0, "t");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 7; i++) {
            int64_t second = round * 7 + i;
            Value x = Value::number(std::to_string(second % 5) + (round == 1 ? ".50" : ".25"));
            Measurement m = at(second, obj({{"x", x}, {"n", Value::number(second * 1000)}}));
            whole.append(m);
            packed.append(m);
        }
        packed.pack();
    }
    for (Bucket *b : {&packed, &whole})
        b->append(at(30, obj({{"x", num("-7")}, {"late", num("2.50")}})));
    EXPECT_EQ(packed.encode(), whole.encode());
    EXPECT_EQ(compare_values(packed.control(), whole.control()), 0);
    EXPECT_GT(packed.packed_bytes(), 0u);
}

TEST(Bucketing, ReloadedBucketDecidesTheSame) {
    BucketingLimits limits;
    Bucket b(ObjectId{}, 0, "t");
    b.append(at(1, obj({{"x", num("1")}})));
    Bucket reloaded(ObjectId{}, 0, "t", BucketData::decode(b.data().encode()));
    EXPECT_EQ(reloaded.decide(at(2, obj({{"x", Value::string("s")}})), limits).reason,
              Rollover::SchemaChange);
    EXPECT_EQ(compare_values(reloaded.control(), b.control()), 0);
}

// Deleting measurements (SPEC §6): control recomputed from the rest, the
// bucket's start kept, sizes those of the remaining measurements.
TEST(Bucketing, WithoutMeasurements) {
    Bucket b(ObjectId{}, 60 * kSecond, "t");
    b.append(
        at(61, obj({{"x", num("1")}}), bson_document_size(at(61, obj({{"x", num("1")}})).fields)));
    b.append(
        at(70, obj({{"x", num("9")}, {"y", Value::string("a")}}),
           bson_document_size(at(70, obj({{"x", num("9")}, {"y", Value::string("a")}})).fields)));
    b.append(
        at(80, obj({{"x", num("5")}}), bson_document_size(at(80, obj({{"x", num("5")}})).fields)));
    Bucket rest = without_measurements(b.id(), b.min_time(), "t", b.data(), {1, 0});
    ASSERT_EQ(rest.count(), 1u);
    Value control = rest.control();
    EXPECT_EQ(control.find("min")->find("t")->as_string(), "1970-01-01T00:01:00.000Z");
    EXPECT_EQ(control.find("max")->find("t")->as_string(), "1970-01-01T00:01:20.000Z");
    EXPECT_EQ(control.find("min")->find("x")->as_number().text, "5");
    EXPECT_EQ(control.find("max")->find("y"), nullptr);
    EXPECT_EQ(control.find("count")->as_exact_int64(), 1);
    EXPECT_EQ(rest.data().size(), bson_document_size(at(80, obj({{"x", num("5")}})).fields));
    // Nothing deleted: the same bucket.
    Bucket same = without_measurements(b.id(), b.min_time(), "t", b.data(), {});
    EXPECT_EQ(compare_values(same.control(), b.control()), 0);
    EXPECT_EQ(same.data().encode(), b.data().encode());
    EXPECT_THROW(without_measurements(b.id(), b.min_time(), "t", b.data(), {0, 1, 2}), Error);
}

// A direct write to the bucket table is checked against its own control.
TEST(BucketRow, DirectWritesMustBeValidBuckets) {
    Bucket b(ObjectId{}, 100 * kSecond, "t");
    b.append(at(100, obj({{"x", num("1")}})));
    b.append(at(130, obj({{"x", num("2")}})));
    Value control = b.control();
    EXPECT_NO_THROW(check_bucket_row(b.data(), control, "t", 100 * kSecond, 130 * kSecond));
    EXPECT_NO_THROW(check_bucket_row(b.data(), control, "", 0, 0));
    auto refused = [&](const Value &c, const std::string &time_field, int64_t min, int64_t max) {
        try {
            check_bucket_row(b.data(), c, time_field, min * kSecond, max * kSecond);
        } catch (const Error &e) {
            return e.code() == ErrorCode::BadValue;
        }
        return false;
    };
    EXPECT_TRUE(refused(Value::object(), "t", 100, 130));               // no version
    EXPECT_TRUE(refused(obj({{"version", num("3")}}), "t", 100, 130));  // unknown version
    EXPECT_TRUE(refused(obj({{"version", num("1")}, {"count", num("3")}}), "t", 100, 130));
    EXPECT_TRUE(refused(control, "t", 101, 130));  // a time before control.min
    EXPECT_TRUE(refused(control, "t", 100, 129));  // a time after control.max
    EXPECT_TRUE(refused(control, "x", 0, 200));    // x is not a date
    EXPECT_TRUE(refused(control, "y", 0, 200));    // no measurement has y
    EXPECT_THROW(check_bucket_row(BucketData{}, obj({{"version", num("1")}}), "", 0, 0), Error);
}

TEST(Tails, MergeTakesTheLatestTailsNoLargerThanWhatTheyMergeWith) {
    EXPECT_EQ(first_tail_to_merge({}, 100, 1), std::nullopt);
    EXPECT_EQ(first_tail_to_merge({1, 1, 1, 1}, 100, 1), std::optional<size_t>(0));
    EXPECT_EQ(first_tail_to_merge({15, 1, 1, 1}, 100, 1), std::optional<size_t>(1));
    EXPECT_EQ(first_tail_to_merge({15, 14, 2}, 100, 1), std::optional<size_t>(2));
    // At least one tail, and then as far as the sizes cascade.
    EXPECT_EQ(first_tail_to_merge({5, 4, 3, 2}, 100, 1), std::optional<size_t>(0));
    EXPECT_EQ(first_tail_to_merge({40, 4, 3, 2}, 100, 1), std::optional<size_t>(1));
    // Tails holding as many as the bucket row: folded into it.
    EXPECT_EQ(first_tail_to_merge({40, 30, 20, 9}, 100, 1), std::nullopt);
    EXPECT_EQ(first_tail_to_merge({40, 30, 20, 9}, 101, 1), std::optional<size_t>(3));
}

// Single appends to one bucket that may keep `limit` tails: each
// measurement is written again a few times, not once per `limit` appends
// as when every full set of tails is folded into the bucket row.
TEST(Tails, MergedAppendsWriteEachMeasurementAFewTimes) {
    for (size_t limit : {8, 15, 64}) {
        uint64_t in_row = 32, written = 0;
        std::vector<uint32_t> tails;
        for (int i = 0; i < 5000; i++) {
            if (tails.size() + 1 < limit) {
                tails.push_back(1);
                written++;
                continue;
            }
            std::optional<size_t> first = first_tail_to_merge(tails, in_row, 1);
            uint64_t merged = 1;
            for (size_t t = first.value_or(0); t < tails.size(); t++)
                merged += tails[t];
            tails.resize(first.value_or(0));
            if (first) {
                tails.push_back(static_cast<uint32_t>(merged));
            } else {
                in_row += merged;
            }
            written += first ? merged : in_row;
            ASSERT_LT(tails.size(), limit);
        }
        uint64_t total = in_row;
        for (uint32_t t : tails)
            total += t;
        EXPECT_EQ(total, 32u + 5000u);
        EXPECT_LT(written, 12u * 5000u) << "limit " << limit;
    }
}

// A tail's control names its bucket, its seq, the bound of its max_time
// and the seq of its first append (when appends were written into it in
// place), and reads back as written.
TEST(Tails, ControlCarriesSeqUntilAndFirst) {
    ObjectId bucket = ObjectId::from_parts(7, 9);
    Value plain =
        tail_control("t", 100 * kSecond, 130 * kSecond, 3, TailRef{bucket, 4, std::nullopt});
    std::optional<TailRef> ref = tail_ref(plain);
    ASSERT_TRUE(ref.has_value());
    EXPECT_EQ(ref->bucket.to_hex(), bucket.to_hex());
    EXPECT_EQ(ref->seq, 4);
    EXPECT_EQ(ref->until, std::nullopt);
    EXPECT_EQ(ref->first, std::nullopt);
    Value in_place =
        tail_control("t", 100 * kSecond, 130 * kSecond, 5, TailRef{bucket, 6, 3700 * kSecond, 4});
    ref = tail_ref(in_place);
    ASSERT_TRUE(ref.has_value());
    EXPECT_EQ(ref->seq, 6);
    EXPECT_EQ(ref->until, std::optional<UnixMicros>(3700 * kSecond));
    EXPECT_EQ(ref->first, std::optional<int64_t>(4));
    // A first that is the seq itself is not written.
    Value one = tail_control("t", 100 * kSecond, 130 * kSecond, 1, TailRef{bucket, 6, {}, 6});
    EXPECT_EQ(one.find("tail")->find("first"), nullptr);
    EXPECT_EQ(tail_ref(Value::object()), std::nullopt);
}

}  // namespace
}  // namespace tscoll
