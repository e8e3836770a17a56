// Packed steps (doc/BUCKET_FORMAT.md, codec 8): integers, or decimals as
// their k at a scale, or times, that move by small steps. Readings that
// walk take a few bits each where their whole range (frame of reference)
// takes many; they decode in order only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/byte_io.hpp"

namespace tscoll::codec {

// The first value, then each step (k[i] - k[i-1]) less a base, either in
// a fixed number of bits or, where they are few and unevenly common, in a
// prefix code; steps outside the frame are listed apart. The bytes, or
// nullopt when ks is empty or a step leaves int64.
std::optional<std::string> packed_steps(const std::vector<int64_t> &ks);
// Appends n values to `out`.
void read_packed_deltas(ByteReader &r, uint64_t n, std::vector<int64_t> &out);

}  // namespace tscoll::codec
