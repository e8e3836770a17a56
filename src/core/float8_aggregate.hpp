// Aggregates of float8 values computed the way PostgreSQL's own are
// (float.c: float8larger, float8smaller, float8pl, float8_accum), so that
// the partial aggregates of each bucket, combined by the aggregates'
// combine functions, give what the aggregate over every measurement gives
// (doc/ARCHITECTURE.md, "Aggregation in buckets").
#pragma once

#include <cmath>
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

// The SQL aggregate an aggregate's partials combine into: max, min, sum,
// avg, count (count(*) for Rows).
inline const char *aggregate_name(Float8Aggregate kind) {
    switch (kind) {
        case Float8Aggregate::Max:
            return "max";
        case Float8Aggregate::Min:
            return "min";
        case Float8Aggregate::Sum:
            return "sum";
        case Float8Aggregate::Avg:
            return "avg";
        case Float8Aggregate::Count:
        case Float8Aggregate::Rows:
            break;
    }
    return "count";
}

// Whether the partial is a count (bigint) rather than a float8 result.
inline bool counts(Float8Aggregate kind) {
    return kind == Float8Aggregate::Count || kind == Float8Aggregate::Rows;
}

// PostgreSQL's float8 order: NaN above every number, equal to itself.
inline bool float8_greater(double a, double b) {
    return std::isnan(a) ? !std::isnan(b) : !std::isnan(b) && a > b;
}

inline bool float8_less(double a, double b) {
    return !std::isnan(a) && (std::isnan(b) || a < b);
}

// One aggregate over the values added so far. add() is inline: it runs
// for every value of every measurement a query aggregates in its buckets.
struct Float8State {
    int64_t count = 0;       // values added
    double value = 0;        // Max, Min, Sum: the result so far; Avg: Sx
    double sum_squares = 0;  // Avg: Sxx

    // Throws Error(OutOfRange) where PostgreSQL reports an overflow.
    void add(Float8Aggregate kind, double x) {
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
                add_to_sum(x);
                break;
            case Float8Aggregate::Avg:
                accumulate(x);
                break;
            case Float8Aggregate::Count:
            case Float8Aggregate::Rows:
                break;
        }
        count++;
    }

  private:
    void add_to_sum(double x);
    void accumulate(double x);  // float8_accum
};

}  // namespace tscoll
