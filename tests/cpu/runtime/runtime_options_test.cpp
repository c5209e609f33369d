// Option structs: documented defaults.
#include "test_support.hpp"

#include "cudacore/event.hpp"
#include "cudacore/stream.hpp"

namespace {

TEST(RuntimeOptions, EventOptionsDefaults) {
    cudacore::EventOptions options;
    EXPECT_FALSE(options.timing_enabled);
    EXPECT_FALSE(options.blocking_sync);
    EXPECT_FALSE(options.ipc_enabled);
}

TEST(RuntimeOptions, StreamOptionsDefaults) {
    cudacore::StreamOptions options;
    EXPECT_TRUE(options.non_blocking);
    EXPECT_FALSE(options.priority.has_value());
}

TEST(RuntimeOptions, MillisecondsHaveSubMicrosecondResolution) {
    cudacore::Milliseconds half_microsecond(0.0005);
    EXPECT_GT(half_microsecond.count(), 0.0);
    EXPECT_LT(std::chrono::duration_cast<std::chrono::nanoseconds>(half_microsecond).count(), 1000);
}

}  // namespace
