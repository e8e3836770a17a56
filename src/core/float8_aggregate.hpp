// Aggregates of float8 values computed the way PostgreSQL's own are
// (float.c: float8larger, float8smaller, float8pl, float8_accum), so that
// the partial aggregates of each bucket, combined by the aggregates'
// combine functions, give what the aggregate over every measurement gives
// (doc/ARCHITECTURE.md, "Aggregation in buckets").
#pragma once

#include <cstdint>

namespace tscoll {

enum class Float8Aggregate : char {
    Max = 'M',
    Min = 'm',
    Sum = 's',
    Avg = 'a',    // the state of avg(float8): {N, Sx, Sxx}
    Count = 'c',  // count(x): the values that are not null
    Rows = 'n',   // count(*)
};

// One aggregate over the values added so far.
struct Float8State {
    int64_t count = 0;       // values added
    double value = 0;        // Max, Min, Sum: the result so far; Avg: Sx
    double sum_squares = 0;  // Avg: Sxx

    // Throws Error(OutOfRange) where PostgreSQL reports an overflow.
    void add(Float8Aggregate kind, double x);
};

// PostgreSQL's float8 order: NaN above every number, equal to itself.
bool float8_greater(double a, double b);
bool float8_less(double a, double b);

}  // namespace tscoll
