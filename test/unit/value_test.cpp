#include "core/value.hpp"

#include <gtest/gtest.h>

#include <limits>
#include "core/compare.hpp"
#include <random>
#include <cstring>
#include <cmath>

namespace tscoll {
namespace {

std::optional<int64_t> exact(const char *text) {
    return Value::number(text).as_exact_int64();
}

TEST(Value, ExactIntegers) {
    EXPECT_EQ(exact("0"), 0);
    EXPECT_EQ(exact("-0"), 0);
    EXPECT_EQ(exact("60"), 60);
    EXPECT_EQ(exact("60.0"), 60);
    EXPECT_EQ(exact("6e1"), 60);
    EXPECT_EQ(exact("6E+1"), 60);
    EXPECT_EQ(exact("600e-1"), 60);
    EXPECT_EQ(exact("0.6e2"), 60);
    EXPECT_EQ(exact("-31536000"), -31536000);
    EXPECT_EQ(exact("9223372036854775807"), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(exact("-9223372036854775808"), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(exact("0e999999999"), 0);
}

TEST(Value, NotExactIntegers) {
    for (const char *text : {"60.5", "1e-7", "9223372036854775808", "-9223372036854775809", "1e19",
                             "1e30", "123456789012345678901234567890", "", "-", ".", "e5", "1e",
                             "1x", "0.000001e3", "1e-999999999999"}) {
        EXPECT_FALSE(exact(text)) << text;
    }
    EXPECT_FALSE(Value::string("60").as_exact_int64());
}

// A number made of a double knows what its text is exactly, as reading
// the text would: whole numbers within int64 (and -0) are integers, which
// BSON sizes and as_exact_int64 tell apart from doubles.
TEST(Value, NumbersOfDoublesKnowTheirForm) {
    std::mt19937_64 random(36);
    std::vector<double> doubles = {0.0,
                                   -0.0,
                                   5.0,
                                   -5.0,
                                   5.5,
                                   3e9,
                                   1e16,
                                   1e19,
                                   -1e19,
                                   0.1,
                                   1e-7,
                                   1e300,
                                   9223372036854775807.0,
                                   -9223372036854775808.0,
                                   4503599627370497.0,
                                   2.5e-310};
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = random();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        if (std::isfinite(d))
            doubles.push_back(i % 2 ? d : std::trunc(d / 1e290 * (random() % 100000)));
    }
    for (double d : doubles) {
        Value value = Value::real(d);
        const Number &made = value.as_number();
        Number read(made.text);
        ExactNumber a = made.exact(), b = read.exact();
        EXPECT_EQ(a.integer, b.integer) << made.text;
        EXPECT_EQ(a.real.has_value(), b.real.has_value()) << made.text;
        if (a.real && b.real) {
            EXPECT_EQ(*a.real, *b.real) << made.text;
        }
        EXPECT_EQ(bson_value_size(value), bson_value_size(Value::number(made.text))) << made.text;
    }
}

TEST(Value, Objects) {
    Value o = Value::object();
    o.add("a", Value::number(1));
    o.add("b", Value::array({Value::null(), Value::boolean(true)}));
    ASSERT_NE(o.find("b"), nullptr);
    EXPECT_EQ(o.find("b")->as_array().size(), 2u);
    EXPECT_EQ(o.find("c"), nullptr);
    EXPECT_EQ(o.as_object()[0].key, "a");  // insertion order kept
    EXPECT_STREQ(o.find("a")->type_name(), "number");
}

}  // namespace
}  // namespace tscoll
