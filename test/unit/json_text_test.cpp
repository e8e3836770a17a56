// read_plain_json: JSON text as jsonb would hold it, or nullopt for what
// PostgreSQL's parser must read.
#include "core/json_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

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

// The texts `seen` calls with, and whether each was said to be seen.
struct Seen {
    std::vector<std::string> texts;
    std::vector<std::string> known;
    SkippableMember member(const char *key) {
        return SkippableMember{key, [this](std::string_view text) {
                                   texts.emplace_back(text);
                                   return std::find(known.begin(), known.end(), text) !=
                                          known.end();
                               }};
    }
};

TEST(PlainJson, SkipsAMemberWhoseTextWasSeen) {
    const char *doc = R"({"time": 1, "tags": {"b": "x]}", "a": [1, {"c": "\""}]}, "v": 2})";
    Seen seen;
    SkippableMember unseen = seen.member("tags");
    auto whole = read_plain_json(doc, &unseen);
    ASSERT_TRUE(whole);
    ASSERT_TRUE(unseen.text);
    EXPECT_EQ(*unseen.text, R"({"b": "x]}", "a": [1, {"c": "\""}]})");
    EXPECT_FALSE(unseen.skipped);
    EXPECT_EQ(keys(*whole), "v,tags,time,");
    EXPECT_EQ(keys(*whole->find("tags")), "a,b,");

    seen.known.push_back(std::string(*unseen.text));
    SkippableMember known = seen.member("tags");
    auto rest = read_plain_json(doc, &known);
    ASSERT_TRUE(rest);
    EXPECT_TRUE(known.skipped);
    EXPECT_EQ(keys(*rest), "v,time,");
    // Only the top level's member, and scalars end where the value does.
    SkippableMember nested = seen.member("c");
    EXPECT_TRUE(read_plain_json(R"({"a": {"c": 1}, "c": 12})", &nested));
    EXPECT_EQ(*nested.text, "12");
}

TEST(PlainJson, ASkippedTextIsStillCheckedAround) {
    Seen seen;
    seen.known = {"{\"a\": 1}", "1"};
    for (const char *text : {R"({"m": {"a": 1} x})", R"({"m": {"a": 1},})", R"({"m": 1 2})",
                             R"({"m": {"a": 1})", R"({"m": 1)"}) {
        SkippableMember m = seen.member("m");
        EXPECT_FALSE(read_plain_json(text, &m)) << text;
    }
    // A repeated key is not read at all: jsonb keeps its last value.
    SkippableMember twice = seen.member("m");
    EXPECT_FALSE(read_plain_json(R"({"m": 1, "m": 2})", &twice));
    EXPECT_TRUE(twice.repeated);
}

}  // namespace
}  // namespace tscoll
