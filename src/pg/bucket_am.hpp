// What the table access method tscoll_buckets needs from the rest of tscoll.
#pragma once

extern "C" {
#include "postgres.h"
}

namespace tscoll::pg {

// While one exists, rows the bucket tables receive come from tscoll's own
// writers: they are neither checked nor reported to the bucket catalog.
class TrustedBucketWrites {
  public:
    TrustedBucketWrites();
    ~TrustedBucketWrites();
    TrustedBucketWrites(const TrustedBucketWrites &) = delete;
    TrustedBucketWrites &operator=(const TrustedBucketWrites &) = delete;

    // After an error that skipped destructors (transaction abort).
    static void reset();
};

// The measurements an UPDATE or DELETE through a collection's view affects
// (pg/modify.cpp). While `counted_modification` points at one, the rows the
// bucket tables receive come from the translated statement: they are
// trusted, and each bucket updated or deleted adds its measurements:
//   meta update: the bucket's count;
//   delete:      the count of a deleted bucket, the drop in count of a
//                rewritten one.
// With `returned`, those measurements also go there (pg/returning.hpp).
struct ReturnedMeasurements;
struct ModificationCount {
    bool deleting;
    uint64 measurements;
    ReturnedMeasurements *returned;
};
extern ModificationCount *counted_modification;

// Whether `relid` is a table of the access method tscoll_buckets.
bool is_bucket_table(Oid relid);

// Sizes the planner's parallel scans of bucket tables by their TOAST too,
// and keeps index builds presenting heap's routine across relcache rebuilds.
void register_bucket_table_hooks();

}  // namespace tscoll::pg
