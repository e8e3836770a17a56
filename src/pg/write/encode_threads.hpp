// A flush's buckets encoded, and the buckets it carries packed, on two
// threads (doc/ARCHITECTURE.md, COPY).
#pragma once

#include <string>
#include <vector>

#include "core/bucket.hpp"
#include "core/value.hpp"

namespace tscoll::pg {

struct EncodedBucket {
    std::string data;  // Bucket::encode()
    Value control;     // Bucket::control()
};

// Each bucket encoded, in order. With enough measurements to share, the
// later buckets go to a second thread while this one encodes the first:
// encoding is pure core work, and a COPY's backend otherwise leaves the
// machine's other cores idle. Calls nothing of PostgreSQL's.
std::vector<EncodedBucket> encode_buckets(const std::vector<const Bucket *> &buckets);

// Bucket::pack() of each bucket, shared the same way.
void pack_buckets(const std::vector<Bucket *> &buckets);

}  // namespace tscoll::pg
