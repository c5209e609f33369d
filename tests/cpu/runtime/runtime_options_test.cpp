// Option structs: documented defaults.
#include "test_support.hpp"

#include "cudacore/event.hpp"
#include "cudacore/stream.hpp"

#include <cuda.h>

#include <map>
#include <string>
#include <vector>

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

// Device::attributes() names each value once, by its current name: where cuda.h keeps a deprecated
// alias (102 is VIRTUAL_ADDRESS_ and VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED), cuda.core's name.
TEST(RuntimeOptions, DeviceAttributeNamesAreCurrentAndUnique) {
    std::map<int, std::string> by_value;
    std::vector<std::string> duplicates;
#define CUDACORE_DEVICE_ATTRIBUTE(suffix)                                                   \
    if (!by_value.emplace(static_cast<int>(CU_DEVICE_ATTRIBUTE_##suffix), #suffix).second) \
        duplicates.push_back(#suffix);
#include "runtime/device_attribute_names.inc"
#undef CUDACORE_DEVICE_ATTRIBUTE
    EXPECT_TRUE(duplicates.empty()) << "value listed twice, first duplicate: " << duplicates.front();
    EXPECT_EQ(by_value.at(102), "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED");
    EXPECT_EQ(by_value.at(8), "MAX_SHARED_MEMORY_PER_BLOCK");
    EXPECT_EQ(by_value.at(12), "MAX_REGISTERS_PER_BLOCK");
    EXPECT_EQ(by_value.at(27), "MAXIMUM_TEXTURE2D_LAYERED_WIDTH");
}

}  // namespace
