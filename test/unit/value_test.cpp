#include "core/value.hpp"

#include <gtest/gtest.h>

#include <limits>

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
