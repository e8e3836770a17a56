// SPEC §8's translation table and option rules.
#include "core/index_spec.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace tscoll {
namespace {

const std::optional<std::string> kMeta = std::string("sensor");

IndexDefinition translate(std::vector<IndexKey> keys, Value options = Value::object()) {
    return translate_index(keys, options, "timestamp", kMeta);
}

Value N(int64_t n) {
    return Value::number(n);
}

ErrorCode error_of(std::vector<IndexKey> keys, Value options = Value::object()) {
    try {
        translate(keys, options);
    } catch (const Error &e) {
        return e.code();
    }
    ADD_FAILURE() << "no error";
    return ErrorCode::Internal;
}

Value obj(std::initializer_list<std::pair<const char *, Value>> members) {
    Value o = Value::object();
    for (const auto &[k, v] : members)
        o.add(k, v);
    return o;
}

TEST(IndexSpec, TranslationTable) {
    using V = std::vector<std::string>;
    EXPECT_EQ(translate({{"timestamp", N(1)}}).columns, (V{"min_time ASC", "max_time ASC"}));
    EXPECT_EQ(translate({{"timestamp", N(-1)}}).columns, (V{"max_time DESC", "min_time DESC"}));
    EXPECT_EQ(translate({{"sensor", N(1)}}).columns, (V{"meta ASC"}));
    EXPECT_EQ(translate({{"sensor.a.b", N(-1)}}).columns, (V{"(meta->'a'->'b') DESC"}));
    EXPECT_EQ(translate({{"temp", N(1)}}).columns,
              (V{"(control->'min'->'temp') ASC", "(control->'max'->'temp') ASC"}));
    EXPECT_EQ(translate({{"temp", N(-1)}}).columns,
              (V{"(control->'max'->'temp') DESC", "(control->'min'->'temp') DESC"}));
    // key order kept; MongoDB's default name
    IndexDefinition d = translate({{"sensor.sensorId", N(1)}, {"timestamp", N(-1)}});
    EXPECT_EQ(d.columns, (V{"(meta->'sensorId') ASC", "max_time DESC", "min_time DESC"}));
    EXPECT_EQ(d.name, "sensor.sensorId_1_timestamp_-1");
    // a field that only starts like the meta field is a measurement field
    EXPECT_EQ(translate({{"sensorx", N(1)}}).columns[0], "(control->'min'->'sensorx') ASC");
    // quotes in field names stay inside the literal
    EXPECT_EQ(translate({{"sensor.it's", N(1)}}).columns[0], "(meta->'it''s') ASC");
}

TEST(IndexSpec, UnsupportedKinds) {
    EXPECT_EQ(error_of({{"temp", Value::string("text")}}), ErrorCode::Unsupported);
    EXPECT_EQ(error_of({{"loc", Value::string("2d")}}), ErrorCode::Unsupported);
    EXPECT_EQ(error_of({{"temp", Value::string("hashed")}}), ErrorCode::Unsupported);
    EXPECT_EQ(error_of({{"$**", N(1)}}), ErrorCode::Unsupported);
    EXPECT_EQ(error_of({{"sensor.$**", N(1)}}), ErrorCode::Unsupported);
    EXPECT_EQ(error_of({{"temp", N(1)}}, obj({{"unique", Value::boolean(true)}})),
              ErrorCode::Unsupported);
    EXPECT_EQ(error_of({}), ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"temp", N(2)}}), ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"sensor..a", N(1)}}), ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"temp", N(1)}}, obj({{"sparse", Value::boolean(true)}})),
              ErrorCode::BadValue);
}

TEST(IndexSpec, Options) {
    IndexDefinition d =
        translate({{"sensor", N(1)}},
                  obj({{"name", Value::string("by_sensor")}, {"hidden", Value::boolean(true)}}));
    EXPECT_EQ(d.name, "by_sensor");
    EXPECT_TRUE(d.hidden);
    EXPECT_EQ(to_json_text(d.options), "{\"hidden\": true}");
    Value filter = obj(
        {{"sensor.region",
          obj({{"$in", Value::array({Value::string("eu"), Value::string("us")})}})},
         {"$and", Value::array({obj({{"sensor.id", obj({{"$gt", N(5)}, {"$lte", N(9)}})}}),
                                obj({{"sensor.x", obj({{"$exists", Value::boolean(false)}})}})})}});
    d = translate({{"timestamp", N(1)}}, obj({{"partialFilterExpression", filter}}));
    EXPECT_EQ(*d.predicate,
              "((meta->'region') IN ('\"eu\"'::jsonb, '\"us\"'::jsonb)) AND "
              "(((jsonb_typeof((meta->'id')) = 'number' AND (meta->'id') > '5'::jsonb) AND "
              "(jsonb_typeof((meta->'id')) = 'number' AND (meta->'id') <= '9'::jsonb)) AND "
              "((meta->'x') IS NULL))");
    // MongoDB: null matches null and missing; a range with a null bound, nothing.
    Value nulls = obj({{"sensor.a", Value::null()},
                       {"sensor.b", obj({{"$lt", Value::null()}})},
                       {"sensor.c", obj({{"$in", Value::array({N(1), Value::null()})}})}});
    d = translate({{"timestamp", N(1)}}, obj({{"partialFilterExpression", nulls}}));
    EXPECT_EQ(*d.predicate,
              "(((meta->'a') IS NULL OR (meta->'a') = 'null'::jsonb)) AND (false) AND "
              "(((meta->'c') IN ('1'::jsonb, 'null'::jsonb) OR (meta->'c') IS NULL))");
    d = translate({{"timestamp", N(1)}},
                  obj({{"partialFilterExpression", obj({{"sensor", Value::string("a")}})}}));
    EXPECT_EQ(*d.predicate, "((meta) = '\"a\"'::jsonb)");
    EXPECT_EQ(
        error_of({{"timestamp", N(1)}}, obj({{"partialFilterExpression", obj({{"temp", N(1)}})}})),
        ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"timestamp", N(1)}},
                       obj({{"partialFilterExpression",
                             obj({{"sensor", obj({{"$regex", Value::string("a")}})}})}})),
              ErrorCode::BadValue);
}

TEST(IndexSpec, SqlLiteral) {
    EXPECT_EQ(sql_literal("it's"), "'it''s'");
    // A backslash makes an E'' literal, which reads the same whatever
    // standard_conforming_strings says.
    EXPECT_EQ(sql_literal("a\\'b"), "E'a\\\\''b'");
}

TEST(IndexSpec, PartialTtl) {
    Value filter = obj({{"sensor", Value::string("a")}});
    IndexDefinition d =
        translate({{"timestamp", N(1)}},
                  obj({{"expireAfterSeconds", N(3600)}, {"partialFilterExpression", filter}}));
    EXPECT_EQ(d.expire_after_seconds, 3600);
    // compound key, non-time key, no filter, a filter off the meta field
    EXPECT_EQ(error_of({{"timestamp", N(1)}, {"sensor", N(1)}},
                       obj({{"expireAfterSeconds", N(1)}, {"partialFilterExpression", filter}})),
              ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"sensor", N(1)}},
                       obj({{"expireAfterSeconds", N(1)}, {"partialFilterExpression", filter}})),
              ErrorCode::BadValue);
    EXPECT_EQ(error_of({{"timestamp", N(1)}}, obj({{"expireAfterSeconds", N(1)}})),
              ErrorCode::BadValue);
    EXPECT_EQ(
        error_of({{"timestamp", N(1)}}, obj({{"expireAfterSeconds", N(1)},
                                             {"partialFilterExpression", obj({{"temp", N(1)}})}})),
        ErrorCode::BadValue);
}

}  // namespace
}  // namespace tscoll
