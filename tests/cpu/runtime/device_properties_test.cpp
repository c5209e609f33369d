// DeviceProperties: flags are bools, counts and sizes ints, deprecated aliases absent, and every
// current CUdevice_attribute of the headers has a member.
#include "cudacore/device_properties.hpp"

#include <cuda.h>
#include <gtest/gtest.h>

#include <set>
#include <type_traits>

using cudacore::DeviceProperties;

static_assert(std::is_same_v<decltype(DeviceProperties::ecc_enabled), bool>);
static_assert(std::is_same_v<decltype(DeviceProperties::managed_memory), bool>);
static_assert(std::is_same_v<decltype(DeviceProperties::cooperative_launch), bool>);
static_assert(std::is_same_v<decltype(DeviceProperties::virtual_memory_management_supported), bool>);
static_assert(std::is_same_v<decltype(DeviceProperties::memory_pools_supported), bool>);
static_assert(std::is_same_v<decltype(DeviceProperties::warp_size), int>);
static_assert(std::is_same_v<decltype(DeviceProperties::multiprocessor_count), int>);
static_assert(std::is_same_v<decltype(DeviceProperties::compute_capability_major), int>);
static_assert(std::is_same_v<decltype(DeviceProperties::max_shared_memory_per_block_optin), int>);

TEST(DeviceProperties, DefaultIsAllZeroAndComparable) {
    DeviceProperties a, b;
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.warp_size, 0);
    EXPECT_FALSE(a.ecc_enabled);
    b.warp_size = 32;
    EXPECT_NE(a, b);
}

TEST(DeviceProperties, OneMemberPerCurrentAttributeAndNoAliases) {
    std::set<int> attributes;
    int members = 0;
#define CUDACORE_DEVICE_PROPERTY(attribute, member, type) \
    attributes.insert(CU_DEVICE_ATTRIBUTE_##attribute);   \
    ++members;
#include "cudacore/device_property_list.inc"
#undef CUDACORE_DEVICE_PROPERTY
    // No attribute twice (an alias and its current name share a value).
    EXPECT_EQ(static_cast<int>(attributes.size()), members);
    // Every value from 1 to the last of CUDA 13.0 is covered except the deprecated ones.
    const std::set<int> deprecated{15, 44, 69, 92, 93, 94, 96};
    for (int value = 1; value <= CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED; ++value) {
        if (deprecated.count(value)) {
            EXPECT_EQ(attributes.count(value), 0u) << "deprecated attribute " << value;
        } else {
            EXPECT_EQ(attributes.count(value), 1u) << "attribute " << value << " has no member";
        }
    }
}
