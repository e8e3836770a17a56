#include "boundary_probe.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace tscoll {
namespace {

TEST(BoundaryProbe, FailsAsAsked) {
    EXPECT_THROW(fail_at_depth(10, ProbeFailure::CoreError), Error);
    EXPECT_THROW(fail_at_depth(10, ProbeFailure::BadAlloc), std::bad_alloc);
    EXPECT_THROW(fail_at_depth(10, ProbeFailure::StdException), std::out_of_range);
}

TEST(BoundaryProbe, CallsAtDepth) {
    int calls = 0;
    EXPECT_EQ(call_at_depth(3, [&] { calls++; }), 4u * 4096u);
    EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace tscoll
