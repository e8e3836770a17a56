// Deliberate failures deep inside C++ call chains, for the tests of the
// C++ <-> PostgreSQL error boundary (sql/boundary.sql).
#pragma once

#include <functional>
#include <string>

namespace tscoll {

enum class ProbeFailure { CoreError, BadAlloc, StdException };

// Recurses `depth` frames, each owning heap memory, then fails as asked.
[[noreturn]] void fail_at_depth(int depth, ProbeFailure failure);

// Recurses `depth` frames, each owning heap memory, then calls `bottom`;
// returns the total size the frames held.
size_t call_at_depth(int depth, const std::function<void()> &bottom);

}  // namespace tscoll
