// What the table access method tscoll_buckets needs from the rest of tscoll.
#pragma once

extern "C" {
#include "postgres.h"
#include "nodes/pathnodes.h"
#include "utils/rel.h"
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
    // Whether one exists.
    static bool active();
};

// The measurements an UPDATE or DELETE through a collection's view affects
// (dml/modify.cpp). While `counted_modification` points at one, the rows the
// bucket tables receive come from the translated statement: they are
// trusted, and each bucket updated or deleted adds its measurements:
//   meta update: the bucket's count;
//   delete:      the count of a deleted bucket, the drop in count of a
//                rewritten one.
// With `returned`, those measurements also go there (nodes/returning.hpp).
struct ReturnedMeasurements;
struct ModificationCount {
    bool deleting;
    // A DELETE that removes measurements by their values (a MERGE): a tail
    // that a fold moved into its bucket's row while the statement waited
    // fails it (40001), as PostgreSQL fails a row moved to another
    // partition. Any other statement skips such a tail: it reaches the
    // tail's measurements through the bucket row.
    bool by_measurement;
    uint64 measurements;
    ReturnedMeasurements *returned;
};
extern ModificationCount *counted_modification;

// Whether `relid` is a table of the access method tscoll_buckets.
bool is_bucket_table(Oid relid);
// Whether `rel` keeps its rows in heap pages: it is a bucket table (whose
// access method is heap's with checks) or a heap table.
bool has_heap_pages(Relation rel);

// For the planner's get_relation_info hook: a bucket table's parallel
// scan sized by its heap and TOAST together.
void size_parallel_scan(Oid relid, RelOptInfo *rel);

// From _PG_init: keeps index builds presenting heap's routine across
// relcache rebuilds.
void register_bucket_table_callbacks();

}  // namespace tscoll::pg
