// Partial aggregates computed as PostgreSQL's float8 aggregates compute them.
#include "core/float8_aggregate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace tscoll {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Float8State over(Float8Aggregate kind, const std::vector<double> &values) {
    Float8State s;
    for (double x : values)
        s.add(kind, x);
    return s;
}

TEST(Float8Aggregate, NaNSortsAboveEveryNumber) {
    EXPECT_TRUE(std::isnan(over(Float8Aggregate::Max, {1, kNaN, kInf}).value));
    EXPECT_EQ(over(Float8Aggregate::Min, {kNaN, 3, -kInf}).value, -kInf);
    EXPECT_EQ(over(Float8Aggregate::Min, {kNaN, 3}).value, 3);
    EXPECT_TRUE(float8_greater(kNaN, kInf));
    EXPECT_FALSE(float8_greater(kNaN, kNaN));
    EXPECT_TRUE(float8_less(-kInf, kNaN));
}

TEST(Float8Aggregate, TiesKeepTheLaterValue) {
    // float8larger(state, x) returns x unless the state is greater.
    EXPECT_TRUE(std::signbit(over(Float8Aggregate::Max, {0.0, -0.0}).value));
    EXPECT_FALSE(std::signbit(over(Float8Aggregate::Min, {-0.0, 0.0}).value));
}

TEST(Float8Aggregate, SumOverflowsAsFloat8plDoes) {
    EXPECT_THROW(over(Float8Aggregate::Sum, {1e308, 1e308}), Error);
    EXPECT_EQ(over(Float8Aggregate::Sum, {1e308, kInf}).value, kInf);
    EXPECT_EQ(over(Float8Aggregate::Sum, {1.5, 2.25}).value, 3.75);
}

TEST(Float8Aggregate, AvgStateIsFloat8Accum) {
    Float8State s = over(Float8Aggregate::Avg, {1, 2, 3, 4});
    EXPECT_EQ(s.count, 4);
    EXPECT_EQ(s.value, 10);
    EXPECT_DOUBLE_EQ(s.sum_squares, 5);  // sum of squared deviations from 2.5
    EXPECT_TRUE(std::isnan(over(Float8Aggregate::Avg, {kInf}).sum_squares));
    EXPECT_TRUE(std::isnan(over(Float8Aggregate::Avg, {1, kInf}).sum_squares));
    EXPECT_THROW(over(Float8Aggregate::Avg, {1e200, -1e200}), Error);
}

TEST(Float8Aggregate, CountsCountAdds) {
    EXPECT_EQ(over(Float8Aggregate::Count, {1, kNaN, 3}).count, 3);
    EXPECT_EQ(over(Float8Aggregate::Max, {}).count, 0);
}

}  // namespace
}  // namespace tscoll
