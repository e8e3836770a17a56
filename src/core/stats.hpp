// The bucket catalog's counters per collection: MongoDB's
// collStats.timeseries (doc/REFERENCE.md, tscoll.collection_stats).
#pragma once

#include <cstdint>

#include "core/value.hpp"

namespace tscoll {

#define TSCOLL_BUCKET_COUNTERS(X)               \
    X(numBucketInserts)                         \
    X(numBucketUpdates)                         \
    X(numBucketsOpenedDueToMetadata)            \
    X(numBucketsClosedDueToCount)               \
    X(numBucketsClosedDueToSchemaChange)        \
    X(numBucketsClosedDueToSize)                \
    X(numBucketsClosedDueToTimeForward)         \
    X(numBucketsClosedDueToMemoryThreshold)     \
    X(numBucketsArchivedDueToTimeBackward)      \
    X(numBucketsArchivedDueToMemoryThreshold)   \
    X(numBucketsReopened)                       \
    X(numBucketsKeptOpenDueToLargeMeasurements) \
    X(numCommits)                               \
    X(numMeasurementsCommitted)

struct BucketCounters {
#define TSCOLL_DECLARE_COUNTER(name) uint64_t name = 0;
    TSCOLL_BUCKET_COUNTERS(TSCOLL_DECLARE_COUNTER)
#undef TSCOLL_DECLARE_COUNTER

    void add(const BucketCounters &o) {
#define TSCOLL_ADD_COUNTER(name) name += o.name;
        TSCOLL_BUCKET_COUNTERS(TSCOLL_ADD_COUNTER)
#undef TSCOLL_ADD_COUNTER
    }

    // Appends every counter, in MongoDB's order, plus avgNumMeasurementsPerCommit.
    void append_to(Value &object) const {
#define TSCOLL_APPEND_COUNTER(name) object.add(#name, Value::number(static_cast<int64_t>(name)));
        TSCOLL_BUCKET_COUNTERS(TSCOLL_APPEND_COUNTER)
#undef TSCOLL_APPEND_COUNTER
        if (numCommits > 0)
            object.add("avgNumMeasurementsPerCommit",
                       Value::number(static_cast<int64_t>(numMeasurementsCommitted / numCommits)));
    }
};

}  // namespace tscoll
