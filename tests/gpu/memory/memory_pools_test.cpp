// Owned device pools (max_size, attributes, trim), pinned host pools, and the synchronous
// resource that devices without pools fall back to, on a GPU.
#include "breadth_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/pinned_memory_pool_resource.hpp"
#include "cudacore/synchronous_memory_resource.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

bool pools_supported(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
}

TEST(OwnedPoolGpu, RefusesAllocationsBeyondMaxSizeWithAClearError) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    auto pool = DeviceMemoryResource::create_owned_pool(device, {.max_size = 64 * MiB});
    EXPECT_TRUE(pool->owns_pool());
    EXPECT_NE(pool->pool(), nullptr);
    Stream stream = device.create_stream();
    Buffer within = pool->allocate(32 * MiB, stream);
    try {
        Buffer beyond = pool->allocate(128 * MiB, stream);
        ADD_FAILURE() << "128 MiB from a pool of max_size 64 MiB succeeded";
    } catch (const DriverError& e) {
        const std::string text = e.what();
        EXPECT_EQ(e.status(), CUDA_ERROR_OUT_OF_MEMORY) << text;
        EXPECT_NE(text.find("cuMemAllocFromPoolAsync"), std::string::npos) << text;
        EXPECT_NE(text.find("134217728 bytes"), std::string::npos) << text;
        EXPECT_NE(text.find("max_size 67108864 bytes"), std::string::npos) << text;
    }
    // The pool is its own: the default pool saw none of it.
    EXPECT_NE(pool->pool(), std::make_shared<DeviceMemoryResource>(device)->pool());
    within.fill_byte(1, stream);
    stream.sync();
}

TEST(OwnedPoolGpu, EveryAttributeIsReadAndTheWritableOnesSet) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    auto resource = DeviceMemoryResource::create_owned_pool(device, {.release_threshold = 8 * MiB});
    MemoryPool pool = resource->memory_pool();
    EXPECT_EQ(pool.release_threshold(), 8 * MiB);

    for (bool value : {false, true}) {
        pool.set_reuse_follow_event_dependencies(value);
        pool.set_reuse_allow_opportunistic(value);
        pool.set_reuse_allow_internal_dependencies(value);
        const MemoryPoolAttributes read = pool.attributes();
        EXPECT_EQ(read.reuse_follow_event_dependencies, value);
        EXPECT_EQ(read.reuse_allow_opportunistic, value);
        EXPECT_EQ(read.reuse_allow_internal_dependencies, value);
    }
    pool.set_release_threshold(std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(pool.release_threshold(), std::numeric_limits<std::uint64_t>::max());

    Stream stream = device.create_stream();
    {
        Buffer a = resource->allocate(16 * MiB, stream);
        Buffer b = resource->allocate(16 * MiB, stream);
        stream.sync();
        const MemoryPoolAttributes busy = pool.attributes();
        EXPECT_GE(busy.used_mem_current, 32 * MiB);
        EXPECT_GE(busy.reserved_mem_current, busy.used_mem_current);
        EXPECT_GE(busy.used_mem_high, busy.used_mem_current);
        EXPECT_GE(busy.reserved_mem_high, busy.reserved_mem_current);
    }
    stream.sync();
    const MemoryPoolAttributes idle = pool.attributes();
    EXPECT_EQ(idle.used_mem_current, 0u);
    EXPECT_GE(idle.used_mem_high, 32 * MiB);
    EXPECT_GE(idle.reserved_mem_current, 32 * MiB) << "the release threshold keeps freed memory";
    pool.reset_used_mem_high();
    EXPECT_EQ(pool.used_mem_high(), 0u);
    pool.trim_to(0);
    EXPECT_EQ(pool.reserved_mem_current(), 0u) << "trim_to(0) gives every unused byte back";
    pool.reset_reserved_mem_high();
    EXPECT_EQ(pool.reserved_mem_high(), 0u);

    // The default pool's attributes read the same way.
    auto shared = std::make_shared<DeviceMemoryResource>(device);
    EXPECT_FALSE(shared->owns_pool());
    EXPECT_NO_THROW(shared->memory_pool().attributes());
}

TEST(OwnedPoolGpu, UnsupportedHandleTypeIsNamed) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    const int supported = device.attribute(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
    if (supported & CU_MEM_HANDLE_TYPE_WIN32) GTEST_SKIP() << "win32 handles supported here";
    try {
        DeviceMemoryResource::create_owned_pool(device, {.handle_types = CU_MEM_HANDLE_TYPE_WIN32});
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("memory pool handle type win32 is not supported by device 0"),
                  std::string::npos)
            << e.what();
    }
}

// Host writes, a kernel checks and rewrites, the host reads back.
void expect_host_and_device_access(const Device& device, MemoryResource& resource) {
    ObjectCode code = test::compile_breadth_kernels(device);
    Kernel check_then_fill = code.get_kernel("check_then_fill");
    Stream stream = device.create_stream();
    const std::size_t size = 4 * MiB;
    Buffer buffer = resource.allocate(size, stream);
    EXPECT_TRUE(buffer.is_host_accessible());
    EXPECT_TRUE(buffer.is_device_accessible());
    stream.sync();
    auto words = buffer.span<unsigned>();
    for (std::size_t i = 0; i < words.size() / 2; ++i) words[i] = test::breadth_pattern(i);
    Buffer mismatches = device.allocate(sizeof(unsigned long long), stream);
    mismatches.fill_byte(0, stream);
    launch(stream, LaunchConfig{.grid = 1024, .block = 256}, check_then_fill, buffer,
           static_cast<unsigned long long>(words.size() / 2),
           static_cast<unsigned long long>(words.size()), mismatches);
    unsigned long long wrong = ~0ull;
    mismatches.copy_to(&wrong, sizeof wrong, stream);
    stream.sync();
    EXPECT_EQ(wrong, 0u) << "the kernel did not see what the host wrote";
    std::size_t host_wrong = 0;
    for (std::size_t i = 0; i < words.size(); ++i) host_wrong += words[i] != test::breadth_pattern(i);
    EXPECT_EQ(host_wrong, 0u) << "the host did not see what the kernel wrote";
}

TEST(PinnedPoolGpu, BuffersAreHostAndDeviceAccessible) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) == 0)
        GTEST_SKIP() << "CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED is 0";
    auto pinned = std::make_shared<PinnedMemoryPoolResource>(
        device, PinnedMemoryPoolOptions{.max_size = 0, .release_threshold = 16 * MiB});
    EXPECT_EQ(pinned->memory_pool().release_threshold(), 16 * MiB);
    expect_host_and_device_access(device, *pinned);
}

TEST(PinnedPoolGpu, HostNumaPlacement) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    const int numa = device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
    if (device.attribute(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) == 0 || numa < 0)
        GTEST_SKIP() << "no host NUMA memory pools here";
    auto pinned = std::make_shared<PinnedMemoryPoolResource>(
        device, PinnedMemoryPoolOptions{.host_numa_id = numa});
    EXPECT_NE(pinned->description().find("host NUMA node " + std::to_string(numa)), std::string::npos);
    expect_host_and_device_access(device, *pinned);
}

TEST(SynchronousResourceGpu, RoundTripsAndIsWhatDevicesWithoutPoolsGet) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto synchronous = std::make_shared<SynchronousMemoryResource>(device);
    Stream stream = device.create_stream();
    std::vector<std::uint16_t> data(1 << 16);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 7);
    Buffer buffer = synchronous->allocate(data.size() * sizeof(std::uint16_t), stream);
    buffer.copy_from(data, stream);
    std::vector<std::uint16_t> back(data.size());
    buffer.copy_to(back, stream);
    stream.sync();
    EXPECT_EQ(back, data);
    buffer.fill_uint16(0xBEEF, stream);
    buffer.copy_to(back, stream);
    stream.sync();
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], 0xBEEF) << i;
    buffer.close();
    EXPECT_TRUE(buffer.is_closed());
    // Device::allocate uses pools where the device has them, the synchronous resource otherwise.
    const bool pools = pools_supported(device);
    EXPECT_EQ(dynamic_cast<SynchronousMemoryResource*>(device.memory_resource().get()) != nullptr,
              !pools);
    Buffer from_device = device.allocate(4096, stream);
    EXPECT_TRUE(from_device.is_device_accessible());
}

}  // namespace
