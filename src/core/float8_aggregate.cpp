#include "core/float8_aggregate.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace tscoll {

namespace {

[[noreturn]] void overflow() {
    throw Error(ErrorCode::OutOfRange, "value out of range: overflow");
}

// float8_accum: Youngs-Cramer, with its overflow rule.
void accumulate(Float8State &s, double x) {
    double n_before = static_cast<double>(s.count);
    double n = n_before + 1.0;
    double sum = s.value + x;
    double sum_squares = s.sum_squares;
    if (n_before > 0.0) {
        double d = x * n - sum;
        sum_squares += d * d / (n * n_before);
        if (std::isinf(sum) || std::isinf(sum_squares)) {
            if (!std::isinf(s.value) && !std::isinf(x))
                overflow();
            sum_squares = std::numeric_limits<double>::quiet_NaN();
        }
    } else if (std::isnan(x) || std::isinf(x)) {
        sum_squares = std::numeric_limits<double>::quiet_NaN();
    }
    s.value = sum;
    s.sum_squares = sum_squares;
}

}  // namespace

bool float8_greater(double a, double b) {
    return std::isnan(a) ? !std::isnan(b) : !std::isnan(b) && a > b;
}

bool float8_less(double a, double b) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
}

void Float8State::add(Float8Aggregate kind, double x) {
    switch (kind) {
        case Float8Aggregate::Max:
            // float8larger(state, x) keeps the state only when it is greater.
            if (count == 0 || !float8_greater(value, x))
                value = x;
            break;
        case Float8Aggregate::Min:
            if (count == 0 || !float8_less(value, x))
                value = x;
            break;
        case Float8Aggregate::Sum:
            if (count > 0) {
                double sum = value + x;
                if (std::isinf(sum) && !std::isinf(value) && !std::isinf(x))
                    overflow();
                x = sum;
            }
            value = x;
            break;
        case Float8Aggregate::Avg:
            accumulate(*this, x);
            break;
        case Float8Aggregate::Count:
        case Float8Aggregate::Rows:
            break;
    }
    count++;
}

}  // namespace tscoll
