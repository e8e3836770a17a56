#include "core/collection_options.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace tscoll {
namespace {

Value ts(std::initializer_list<std::pair<const char *, Value>> members,
         Value top = Value::object()) {
    Value t = Value::object();
    for (const auto &[k, v] : members)
        t.add(k, v);
    top.add("timeseries", t);
    return top;
}

ErrorCode error_of(const Value &options) {
    try {
        parse_create_options(options);
    } catch (const Error &e) {
        return e.code();
    }
    ADD_FAILURE() << "no error";
    return ErrorCode::Internal;
}

std::string message_of(const Value &options) {
    try {
        parse_create_options(options);
    } catch (const Error &e) {
        return e.what();
    }
    return "";
}

const Value S(const char *s) {
    return Value::string(s);
}
const Value N(int64_t n) {
    return Value::number(n);
}

TEST(CollectionOptions, DefaultsToSeconds) {
    CollectionOptions o = parse_create_options(ts({{"timeField", S("t")}}));
    EXPECT_EQ(o.time_field, "t");
    EXPECT_FALSE(o.meta_field);
    EXPECT_EQ(o.granularity, Granularity::Seconds);
    EXPECT_EQ(o.bucket_max_span_seconds, 3600);
    EXPECT_EQ(o.bucket_rounding_seconds, 60);
    EXPECT_FALSE(o.expire_after_seconds);
}

TEST(CollectionOptions, GranularityDefaults) {
    struct {
        const char *name;
        int32_t span, rounding;
    } cases[] = {{"seconds", 3600, 60}, {"minutes", 86400, 3600}, {"hours", 2592000, 86400}};
    for (const auto &c : cases) {
        CollectionOptions o =
            parse_create_options(ts({{"timeField", S("t")}, {"granularity", S(c.name)}}));
        EXPECT_EQ(o.bucket_max_span_seconds, c.span) << c.name;
        EXPECT_EQ(o.bucket_rounding_seconds, c.rounding) << c.name;
        EXPECT_STREQ(granularity_name(*o.granularity), c.name);
    }
}

TEST(CollectionOptions, FixedBucketing) {
    CollectionOptions o = parse_create_options(ts({{"timeField", S("t")},
                                                   {"bucketMaxSpanSeconds", N(100)},
                                                   {"bucketRoundingSeconds", N(100)}}));
    EXPECT_FALSE(o.granularity);
    EXPECT_EQ(o.bucket_max_span_seconds, 100);
    EXPECT_EQ(o.bucket_rounding_seconds, 100);
    for (int64_t bad : {0, -1, 31536001}) {
        EXPECT_EQ(error_of(ts({{"timeField", S("t")},
                               {"bucketMaxSpanSeconds", N(bad)},
                               {"bucketRoundingSeconds", N(bad)}})),
                  ErrorCode::InvalidOptions)
            << bad;
    }
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"bucketMaxSpanSeconds", N(100)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"bucketRoundingSeconds", N(100)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(message_of(ts({{"timeField", S("t")},
                             {"bucketMaxSpanSeconds", N(100)},
                             {"bucketRoundingSeconds", N(50)}})),
              "invalid time-series option: \"bucketMaxSpanSeconds\" and "
              "\"bucketRoundingSeconds\" must be equal");
}

TEST(CollectionOptions, GranularityCombinations) {
    // The default span of the granularity is allowed, anything else is not.
    EXPECT_NO_THROW(parse_create_options(ts({{"timeField", S("t")},
                                             {"granularity", S("hours")},
                                             {"bucketMaxSpanSeconds", N(2592000)}})));
    EXPECT_EQ(error_of(ts({{"timeField", S("t")},
                           {"granularity", S("hours")},
                           {"bucketMaxSpanSeconds", N(3600)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")},
                           {"granularity", S("seconds")},
                           {"bucketRoundingSeconds", N(60)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"granularity", S("days")}})),
              ErrorCode::InvalidOptions);
}

TEST(CollectionOptions, FieldNames) {
    for (const char *bad : {"a.b", "$t", ""}) {
        EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"metaField", S(bad)}})),
                  ErrorCode::InvalidOptions)
            << bad;
    }
    EXPECT_EQ(error_of(ts({{"timeField", Value::string(std::string("a\0b", 3))}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"metaField", S("t")}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"metaField", S("_id")}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("doc")}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"metaField", S("doc")}})),
              ErrorCode::InvalidOptions);
    EXPECT_NO_THROW(parse_create_options(ts({{"timeField", S("t$")}, {"metaField", S("m-1")}})));
}

TEST(CollectionOptions, Types) {
    EXPECT_EQ(error_of(ts({{"timeField", N(1)}})), ErrorCode::TypeMismatch);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"metaField", Value::null()}})),
              ErrorCode::TypeMismatch);
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"granularity", N(1)}})),
              ErrorCode::TypeMismatch);
    Value top = Value::object();
    top.add("expireAfterSeconds", S("1"));
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}}, top)), ErrorCode::TypeMismatch);
    EXPECT_EQ(error_of(Value::array()), ErrorCode::TypeMismatch);
    Value not_object = Value::object();
    not_object.add("timeseries", S("t"));
    EXPECT_EQ(error_of(not_object), ErrorCode::TypeMismatch);
}

TEST(CollectionOptions, RequiredTimeField) {
    EXPECT_EQ(error_of(Value::object()), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({})), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(ts({{"timeField", S("")}})), ErrorCode::InvalidOptions);
}

TEST(CollectionOptions, UnknownKeys) {
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}, {"foo", N(1)}})), ErrorCode::InvalidOptions);
    Value top = Value::object();
    top.add("capped", Value::boolean(true));
    EXPECT_EQ(error_of(ts({{"timeField", S("t")}}, top)), ErrorCode::InvalidOptions);
}

TEST(CollectionOptions, Expiry) {
    auto with_expire = [](Value v) {
        Value top = Value::object();
        top.add("expireAfterSeconds", std::move(v));
        return ts({{"timeField", S("t")}}, top);
    };
    EXPECT_EQ(parse_create_options(with_expire(N(0))).expire_after_seconds, 0);
    EXPECT_EQ(parse_create_options(with_expire(N((int64_t{1} << 62) - 1))).expire_after_seconds,
              (int64_t{1} << 62) - 1);
    EXPECT_EQ(error_of(with_expire(N(-1))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_expire(N(int64_t{1} << 62))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_expire(Value::number("1e30"))), ErrorCode::BadValue);
    EXPECT_EQ(error_of(with_expire(Value::number("1.5"))), ErrorCode::BadValue);
}

TEST(CollectionOptions, FlatValue) {
    CollectionOptions o = parse_create_options(ts({{"timeField", S("t")}, {"metaField", S("m")}}));
    Value flat = to_flat_value(o);
    EXPECT_EQ(flat.find("timeField")->as_string(), "t");
    EXPECT_EQ(flat.find("metaField")->as_string(), "m");
    EXPECT_EQ(flat.find("granularity")->as_string(), "seconds");
    EXPECT_EQ(flat.find("bucketMaxSpanSeconds")->as_exact_int64(), 3600);
    EXPECT_EQ(flat.find("bucketRoundingSeconds")->as_exact_int64(), 60);
    EXPECT_TRUE(flat.find("expireAfterSeconds")->is(Value::Kind::Null));
}

}  // namespace
}  // namespace tscoll
