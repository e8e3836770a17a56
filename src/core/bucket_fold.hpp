// Writing a stored bucket again with more measurements (a fold of its
// tails, an append that rewrites it) without building a value per number,
// date or ObjectId: the stored data is read as the typed codecs hold it
// and written again from there. The bytes and the control are those that
// decoding every piece (BucketData::decode), appending and encoding
// (BucketData::encode, Bucket::control) give; a fold of 150 to 360 TSBS
// rows costs several microseconds per measurement that way (codec_bench).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bucket_data.hpp"
#include "core/date.hpp"
#include "core/value.hpp"

namespace tscoll {

struct FoldedBucket {
    std::string data;
    Value control;  // as Bucket::control()
};

// `stored`: the bucket's data, then its tails' in order; `appended`: the
// measurements added after them; `start`: the bucket's start; `full`: the
// bucket closes by size with them. nullopt when a column holds anything
// but numbers (integers and decimals), dates or ObjectIds, one kind
// throughout, or a piece is of version 1: the caller then decodes.
// Throws Error(Corrupt) as decode would on stored data that is not well
// formed.
std::optional<FoldedBucket> fold_typed(const std::vector<std::string_view> &stored,
                                       const BucketData &appended, UnixMicros start,
                                       const std::string &time_field, bool full);
// The same data without the control: the bytes of fold_typed(...)->data.
std::optional<std::string> fold_typed_data(const std::vector<std::string_view> &stored,
                                           const BucketData &appended, bool full);

}  // namespace tscoll
