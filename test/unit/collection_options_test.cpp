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

Value obj(std::initializer_list<std::pair<const char *, Value>> members) {
    Value o = Value::object();
    for (const auto &[k, v] : members)
        o.add(k, v);
    return o;
}

// collMod on a collection, step by step: either its new options or the error.
struct CollModSequence {
    CollectionOptions options;

    ErrorCode fails(const Value &changes) {
        try {
            apply_coll_mod(options, changes);
        } catch (const Error &e) {
            return e.code();
        }
        ADD_FAILURE() << "no error";
        return ErrorCode::Internal;
    }
    CollMod works(const Value &changes) {
        CollMod m = apply_coll_mod(options, changes);
        options = m.options;
        return m;
    }
};

// MongoDB's timeseries_collmod sequence (SPEC §10).
TEST(CollMod, MongoSequence) {
    const int64_t span_hours = 60 * 60 * 24 * 30, rounding_hours = 60 * 60 * 24;
    CollModSequence c{parse_create_options(ts({{"timeField", S("time")}}))};
    EXPECT_EQ(c.fails(obj({{"validator", Value::object()}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"viewOn", S("foo")}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.works(obj({{"expireAfterSeconds", N(60)}})).options.expire_after_seconds, 60);
    EXPECT_TRUE(c.works(ts({{"granularity", S("minutes")}})).bucketing_changed);
    EXPECT_EQ(c.fails(ts({{"granularity", S("seconds")}})), ErrorCode::InvalidOptions);
    c.works(ts({{"granularity", S("hours")}}));
    EXPECT_EQ(c.options.bucket_max_span_seconds, span_hours);
    EXPECT_EQ(c.options.bucket_rounding_seconds, rounding_hours);
    // one of span and rounding alone; a decrease; unequal values
    EXPECT_EQ(c.fails(ts({{"bucketMaxSpanSeconds", N(span_hours)}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(ts({{"bucketRoundingSeconds", N(rounding_hours)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(ts({{"bucketMaxSpanSeconds", N(rounding_hours)},
                          {"bucketRoundingSeconds", N(rounding_hours)}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(ts({{"bucketMaxSpanSeconds", N(span_hours + 1)},
                          {"bucketRoundingSeconds", N(rounding_hours + 1)}})),
              ErrorCode::InvalidOptions);
    // granularity with its own default span is a no-op; with a rounding, refused
    EXPECT_FALSE(c.works(ts({{"granularity", S("hours")}, {"bucketMaxSpanSeconds", N(span_hours)}}))
                     .bucketing_changed);
    EXPECT_EQ(c.fails(ts({{"granularity", S("hours")},
                          {"bucketMaxSpanSeconds", N(span_hours)},
                          {"bucketRoundingSeconds", N(rounding_hours)}})),
              ErrorCode::InvalidOptions);
    // fixed bucketing, up: granularity dropped
    EXPECT_TRUE(c.works(ts({{"bucketMaxSpanSeconds", N(span_hours + 1)},
                            {"bucketRoundingSeconds", N(span_hours + 1)}}))
                    .bucketing_changed);
    EXPECT_FALSE(c.options.granularity);
    EXPECT_EQ(c.options.bucket_rounding_seconds, span_hours + 1);
    // timeseries changes alone only
    EXPECT_EQ(c.fails(obj({{"timeseries", obj({{"granularity", S("hours")}})},
                           {"expireAfterSeconds", N(1)}})),
              ErrorCode::InvalidOptions);
    EXPECT_FALSE(c.works(ts({})).bucketing_changed);
    EXPECT_FALSE(c.works(Value::object()).bucketing_changed);
}

TEST(CollMod, FromFixedBucketing) {
    CollModSequence c{parse_create_options(ts({{"timeField", S("time")},
                                               {"bucketMaxSpanSeconds", N(200)},
                                               {"bucketRoundingSeconds", N(200)}}))};
    c.works(ts({{"granularity", S("minutes")}}));
    EXPECT_EQ(c.options.granularity, Granularity::Minutes);
    EXPECT_EQ(c.options.bucket_rounding_seconds, 3600);
    EXPECT_EQ(c.fails(ts(
                  {{"bucketMaxSpanSeconds", N(31536001)}, {"bucketRoundingSeconds", N(31536001)}})),
              ErrorCode::BadValue);
    c.works(ts({{"bucketMaxSpanSeconds", N(31536000)}, {"bucketRoundingSeconds", N(31536000)}}));
    EXPECT_EQ(c.options.bucket_max_span_seconds, 31536000);
    // a granularity finer than the fixed bucketing
    CollModSequence d{parse_create_options(ts({{"timeField", S("time")},
                                               {"bucketMaxSpanSeconds", N(7200)},
                                               {"bucketRoundingSeconds", N(7200)}}))};
    EXPECT_EQ(d.fails(ts({{"granularity", S("seconds")}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(d.fails(ts({{"granularity", S("minutes")}})), ErrorCode::InvalidOptions);
    d.works(ts({{"granularity", S("hours")}}));
}

TEST(CollMod, ExpiryAndIndexShapes) {
    CollModSequence c{parse_create_options(ts({{"timeField", S("time")}}))};
    c.works(obj({{"expireAfterSeconds", N(0)}}));
    EXPECT_EQ(c.options.expire_after_seconds, 0);
    c.works(obj({{"expireAfterSeconds", S("off")}}));
    EXPECT_FALSE(c.options.expire_after_seconds);
    EXPECT_EQ(c.fails(obj({{"expireAfterSeconds", S("on")}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"expireAfterSeconds", N(-1)}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"expireAfterSeconds", Value::object()}})), ErrorCode::TypeMismatch);
    EXPECT_EQ(c.fails(obj({{"timeseries", S("x")}})), ErrorCode::TypeMismatch);
    EXPECT_EQ(c.fails(ts({{"granularity", N(1)}})), ErrorCode::TypeMismatch);
    EXPECT_EQ(c.fails(ts({{"granularity", S("days")}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(ts({{"timeField", S("t")}})), ErrorCode::InvalidOptions);
    CollMod m =
        c.works(obj({{"index", obj({{"name", S("a_1")}, {"hidden", Value::boolean(true)}})}}));
    ASSERT_TRUE(m.index);
    EXPECT_EQ(c.fails(obj({{"index", obj({{"name", S("a_1")}})}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"index", obj({{"name", S("a_1")},
                                          {"keyPattern", Value::object()},
                                          {"hidden", Value::boolean(true)}})}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj(
                  {{"index", obj({{"name", S("a_1")}, {"prepareUnique", Value::boolean(true)}})}})),
              ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"index", obj({{"name", S("a_1")}, {"hidden", N(1)}})}})),
              ErrorCode::TypeMismatch);
}

TEST(CollMod, FlatRoundTrip) {
    CollectionOptions o = parse_create_options(
        ts({{"timeField", S("t")}, {"metaField", S("m")}, {"granularity", S("minutes")}},
           obj({{"expireAfterSeconds", N(10)}})));
    EXPECT_TRUE(from_flat_value(to_flat_value(o)) == o);
    CollectionOptions fixed = parse_create_options(ts({{"timeField", S("t")},
                                                       {"bucketMaxSpanSeconds", N(90)},
                                                       {"bucketRoundingSeconds", N(90)}}));
    EXPECT_TRUE(from_flat_value(to_flat_value(fixed)) == fixed);
}

Value with_fields(Value fields) {
    return ts({{"timeField", S("t")}, {"metaField", S("m")}}, obj({{"fields", std::move(fields)}}));
}

TEST(TypedFields, Create) {
    CollectionOptions o = parse_create_options(
        with_fields(obj({{"temp", S("float8")}, {"n", S("bigint")}, {"ok", S("boolean")}})));
    ASSERT_EQ(o.fields.size(), 3u);
    EXPECT_EQ(o.fields[0].name, "temp");
    EXPECT_EQ(o.fields[0].type, "float8");
    EXPECT_EQ(o.fields[1].type, "int8");  // PostgreSQL's other spellings
    EXPECT_EQ(o.fields[2].type, "bool");
    EXPECT_TRUE(from_flat_value(to_flat_value(o)) == o);
    EXPECT_TRUE(parse_create_options(with_fields(Value::null())).fields.empty());
    for (const char *type : kTypedFieldTypes)
        EXPECT_EQ(parse_create_options(with_fields(obj({{"f", S(type)}}))).fields[0].type, type);
}

TEST(TypedFields, Refused) {
    EXPECT_EQ(error_of(with_fields(S("temp"))), ErrorCode::TypeMismatch);
    EXPECT_EQ(error_of(with_fields(obj({{"temp", N(1)}}))), ErrorCode::TypeMismatch);
    EXPECT_EQ(error_of(with_fields(obj({{"temp", S("float4")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"t", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"m", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"doc", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"a.b", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"$a", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_EQ(error_of(with_fields(obj({{"", S("text")}}))), ErrorCode::InvalidOptions);
    EXPECT_NE(message_of(with_fields(obj({{"temp", S("float4")}}))).find("\"temp\""),
              std::string::npos);
}

TEST(TypedFields, CollMod) {
    CollModSequence c{parse_create_options(with_fields(obj({{"temp", S("float8")}})))};
    CollMod m = c.works(obj({{"fields", obj({{"status", S("text")}, {"temp", S("float8")}})}}));
    ASSERT_EQ(m.added_fields.size(), 1u);
    EXPECT_EQ(m.added_fields[0].name, "status");
    ASSERT_EQ(c.options.fields.size(), 2u);
    EXPECT_EQ(c.options.fields[1].name, "status");
    EXPECT_TRUE(
        c.works(obj({{"fields", obj({{"temp", S("double precision")}})}})).added_fields.empty());
    EXPECT_EQ(c.fails(obj({{"fields", obj({{"temp", S("int8")}})}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"fields", obj({{"t", S("int8")}})}})), ErrorCode::InvalidOptions);
    EXPECT_EQ(c.fails(obj({{"fields", N(1)}})), ErrorCode::TypeMismatch);
}

}  // namespace
}  // namespace tscoll
