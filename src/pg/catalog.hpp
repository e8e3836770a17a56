// The bucket catalog: per collection and series, the open bucket and the
// archived ones, plus the collection's counters. Everything here is a hint
// the insert path checks against the bucket table (which is the truth), so
// forgetting an entry is always safe.
#pragma once

extern "C" {
#include "postgres.h"
}

#include <optional>
#include <string>
#include <vector>

#include "core/date.hpp"
#include "core/objectid.hpp"
#include "core/stats.hpp"

namespace tscoll::pg::catalog {

struct BucketRef {
    ObjectId id;
    UnixMicros min_time;
};

struct SeriesState {
    std::optional<BucketRef> open;
    std::vector<BucketRef> archived;
};

SeriesState series(Oid bucket_table, const std::string &key);
// Stores the series' state; remembered as touched by the current
// (sub)transaction, and forgotten if it aborts.
void store_series(Oid bucket_table, const std::string &key, SeriesState state);
// Forgets everything about a collection (direct writes, drops).
void forget_collection(Oid bucket_table);

// Counters reach the collection when the transaction commits.
void count(Oid bucket_table, const BucketCounters &delta);
BucketCounters counters(Oid bucket_table);

struct Usage {
    uint64_t open_buckets = 0;
    uint64_t archived_buckets = 0;
    uint64_t memory = 0;
};
Usage usage();

void register_transaction_callbacks();

}  // namespace tscoll::pg::catalog
