#include "core/float8_aggregate.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace tscoll {

namespace {

[[noreturn]] void overflow() {
    throw Error(ErrorCode::OutOfRange, "value out of range: overflow");
}

}  // namespace

// float8_accum: Youngs-Cramer, with its overflow rule.
void Float8State::accumulate(double x) {
    double n_before = static_cast<double>(count);
    double n = n_before + 1.0;
    double sum = value + x;
    double squares = sum_squares;
    if (n_before > 0.0) {
        double d = x * n - sum;
        squares += d * d / (n * n_before);
        if (std::isinf(sum) || std::isinf(squares)) {
            if (!std::isinf(value) && !std::isinf(x))
                overflow();
            squares = std::numeric_limits<double>::quiet_NaN();
        }
    } else if (std::isnan(x) || std::isinf(x)) {
        squares = std::numeric_limits<double>::quiet_NaN();
    }
    value = sum;
    sum_squares = squares;
}

void Float8State::add_to_sum(double x) {
    if (count > 0) {
        double sum = value + x;
        if (std::isinf(sum) && !std::isinf(value) && !std::isinf(x))
            overflow();
        x = sum;
    }
    value = x;
}

}  // namespace tscoll
