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

}  // namespace tscoll::pg
