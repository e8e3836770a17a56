// read_plain_json: JSON text as jsonb would hold it, or nullopt for what
// PostgreSQL's parser must read.
#include "core/json_text.hpp"

#include <gtest/gtest.h>

namespace tscoll {
namespace {

std::string keys(const Value &v) {
    std::string out;
    for (const Member &m : v.as_object())
        out += m.key + ",";
    return out;
}

TEST(PlainJson, ObjectsInJsonbOrderLastOfRepeatedKeys) {
    auto v = read_plain_json(R"({"time": 1, "tags": {"b": 1, "a": 2}, "usage_user": 3, "x": 4})");
    ASSERT_TRUE(v);
    EXPECT_EQ(keys(*v), "x,tags,time,usage_user,");
    EXPECT_EQ(keys(*v->find("tags")), "a,b,");
    auto repeated = read_plain_json(R"({"a": 1, "b": 2, "a": 3, "a": 4})");
    ASSERT_TRUE(repeated);
    EXPECT_EQ(keys(*repeated), "a,b,");
    EXPECT_EQ(repeated->find("a")->as_number().text, "4");
}

TEST(PlainJson, ScalarsAsJsonbPrintsThem) {
    auto v =
        read_plain_json(" [1.50, -2, 0, 0.0, 12345678901234567890123, true, false, null, \"\"] ");
    ASSERT_TRUE(v);
    const Value::Array &a = v->as_array();
    ASSERT_EQ(a.size(), 9u);
    EXPECT_EQ(a[0].as_number().text, "1.50");
    EXPECT_EQ(a[1].as_number().text, "-2");
    EXPECT_EQ(a[2].as_number().text, "0");
    EXPECT_EQ(a[3].as_number().text, "0.0");
    EXPECT_EQ(a[4].as_number().text, "12345678901234567890123");
    EXPECT_TRUE(a[5].as_bool());
    EXPECT_FALSE(a[6].as_bool());
    EXPECT_TRUE(a[7].is(Value::Kind::Null));
    EXPECT_EQ(a[8].as_string(), "");
    auto s = read_plain_json(R"("a\"b\\c\/d\b\f\n\r\t é")");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->as_string(), "a\"b\\c/d\b\f\n\r\t é");
    EXPECT_TRUE(read_plain_json("{}")->as_object().empty());
    EXPECT_TRUE(read_plain_json("[]")->as_array().empty());
}

TEST(PlainJson, LeavesTheRestToPostgreSQL) {
    for (const char *text :
         {R"("\u00e9")", "1e3",   "1E+3",  "-0",    "-0.00", "01",       "1.",
          ".5",          "+1",    "tru",   "truex", "nul",   "[1,]",     "{\"a\" 1}",
          "{\"a\":1,}",  "{a:1}", "[1] 2", "",      "  ",    "\"a\tb\"", "\"unterminated",
          "NaN",         "[1 2]"})
        EXPECT_FALSE(read_plain_json(text)) << text;
    std::string deep(101, '[');
    deep += std::string(101, ']');
    EXPECT_FALSE(read_plain_json(deep));
    std::string shallow(100, '[');
    shallow += std::string(100, ']');
    EXPECT_TRUE(read_plain_json(shallow));
}

}  // namespace
}  // namespace tscoll
