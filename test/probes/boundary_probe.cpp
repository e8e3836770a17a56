#include "boundary_probe.hpp"

#include <new>
#include <stdexcept>
#include <vector>

#include "core/error.hpp"

namespace tscoll {

namespace {

constexpr size_t kFrameBytes = 4096;

}  // namespace

void fail_at_depth(int depth, ProbeFailure failure) {
    std::vector<char> frame(kFrameBytes, 'x');
    if (depth > 0)
        fail_at_depth(depth - 1, failure);
    switch (failure) {
        case ProbeFailure::CoreError:
            throw Error(ErrorCode::InvalidOptions, "probe: invalid option deep in the core",
                        "thrown under frames of " + std::to_string(frame.size()) + " bytes each",
                        "a hint");
        case ProbeFailure::BadAlloc:
            throw std::bad_alloc();
        case ProbeFailure::StdException:
            throw std::out_of_range("probe: out of range");
    }
    throw Error(ErrorCode::Internal, "probe: unknown failure");
}

size_t call_at_depth(int depth, const std::function<void()> &bottom) {
    std::string frame(kFrameBytes, 'x');
    if (depth > 0)
        return frame.size() + call_at_depth(depth - 1, bottom);
    bottom();
    return frame.size();
}

}  // namespace tscoll
