// The bucket catalog: per collection and series, the open bucket and the
// archived ones, plus the collection's counters. Everything here is a hint
// the insert path checks against the bucket table (which is the truth), so
// forgetting an entry is always safe.
//
// When tscoll is preloaded the catalog lives in shared memory and every
// session of the cluster shares it (doc/REFERENCE.md, tscoll.catalog_stats,
// tscoll.collection_stats); otherwise each session keeps its own, with the
// same layout and limits.
#pragma once

extern "C" {
#include "postgres.h"
#include "access/transam.h"
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

// Archived buckets remembered per series; older ones stay reopenable
// through the bucket table's index.
constexpr size_t kMaxArchived = 8;

// The open bucket as its last writer left it (next_seq 0: not known).
// Writers of a bucket hold its row lock, and a transaction that aborts
// makes the catalog forget the summaries it stored, so with a shared catalog a
// writer that gets the lock finds here whether tails were appended since it
// last read the bucket, and, when they added no field to its schema, its
// state with them, without reading them.
struct OpenSummary {            // 72 bytes
    int64_t next_seq = 0;       // the seq its next tail gets
    uint64_t size = 0;          // BucketState::size
    uint64_t stored_bytes = 0;  // StoredBucket::stored_bytes
    uint64_t schema = 0;        // Schema::fingerprint
    uint64_t row = 0;           // a hash of the bucket row's version (ctid, xmin) it counts
    // The (sub)transaction that stored it: its tails count only once it
    // committed. The catalog forgets the summaries of an aborted one in
    // its abort callbacks, after other sessions can take the bucket's lock,
    // and keeps a prepared one's. Full, as a series may stay idle for
    // longer than 32-bit ids can tell.
    FullTransactionId writer = InvalidFullTransactionId;
    uint32_t count = 0;
    uint32_t tails = 0;
    // Where its latest tail's version is (block, offset): a hint, which
    // the writer checks against the row it finds there.
    uint32_t latest_tail_block = 0;
    uint16_t latest_tail_offset = 0;  // 0: not known
    // The series' catalog entry, numbered anew each time it is made or its
    // summary forgotten: a DELETE, TTL or an eviction forgets the entry, an
    // aborted writer its summary, so a session that saw another number
    // cannot trust the tails it counted (one may have gone, and its seq
    // been given again).
    uint64_t chain = 0;
};

struct SeriesState {
    std::optional<BucketRef> open;
    OpenSummary open_summary;
    std::vector<BucketRef> archived;  // at most kMaxArchived, oldest first
};

// Whether every session of the cluster shares the catalog (preloaded).
bool shared();

SeriesState series(Oid bucket_table, const std::string &key);
// Stores the series' state, as a writer left it that read `read`;
// buckets other writers stored since stay archived. `open_created`: its
// open bucket is one this statement created. Remembered as touched by the
// current (sub)transaction: if that aborts, the summary is forgotten and
// an open bucket it created gives way to the one it found. Returns the
// entry's chain (0: not stored).
uint64_t store_series(Oid bucket_table, const std::string &key, const SeriesState &read,
                      const SeriesState &state, bool open_created);
// Forgets every series of a collection (direct writes to its bucket table).
void forget_series(Oid bucket_table);
// Forgets a dropped collection: its series and its counters.
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

// The shared memory hooks' work, when preloaded: reserving it, and
// finding or creating the catalog in it.
void request_shared_memory();
void attach_shared_memory();
void register_transaction_callbacks();

}  // namespace tscoll::pg::catalog
