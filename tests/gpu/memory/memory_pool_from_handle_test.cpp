// DeviceMemoryResource::from_handle, the one way to wrap a pool made with the raw driver, and its
// memory_pool(): a pool taken over is destroyed once, when the resource's last holder (a
// MemoryPool copy among them) goes (seen through a counting driver table); a borrowed one is still
// the caller's afterwards; both are allocated from. The device the caller names is checked against
// the pool's access: with two devices, device 0 named for a pool of device 1 is refused. The
// deprecated MemoryPool::from_handle forwards to it.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_pool.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "loader/driver_api.hpp"

#include <atomic>
#include <chrono>
#include <string>

namespace {

using namespace cudacore;

bool pools_supported(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
}

CUmemoryPool raw_pool(const Device& device) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device.ordinal();
    CUmemoryPool raw = nullptr;
    EXPECT_EQ(detail::driver().cuMemPoolCreate(&raw, &props), CUDA_SUCCESS);
    return raw;
}

// Allocates from `pool` through a resource that does not own it, checks the memory came from
// there, and frees it (the free done before this returns).
void allocate_from(CUmemoryPool pool, const Device& device) {
    auto resource = DeviceMemoryResource::from_handle(pool, device);
    Stream stream = device.create_stream();
    {
        Buffer buffer = resource->allocate(1 << 20, stream);
        buffer.fill_byte(7, stream);
        stream.sync();
        EXPECT_EQ(pointer_attributes(buffer.handle()).pool, pool) << "allocated from that pool";
        buffer.close(stream);
    }
    stream.sync();
}

std::atomic<int> destroys{0};
std::atomic<CUmemoryPool> watched{nullptr};
const detail::DriverApi* real_driver = nullptr;
CUresult counting_pool_destroy(CUmemoryPool pool) {
    if (pool == watched.load()) ++destroys;
    return real_driver->cuMemPoolDestroy(pool);
}

TEST(MemoryPoolFromHandleGpu, ATakenPoolIsDestroyedOnceWithItsLastCopy) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    const CUmemoryPool raw = raw_pool(device);
    ASSERT_NE(raw, nullptr);
    real_driver = &detail::driver();
    static detail::DriverApi counting;  // static: a release thread may still read it after the swap back
    counting = *real_driver;
    counting.cuMemPoolDestroy = counting_pool_destroy;
    watched = raw;
    destroys = 0;
    detail::loaded_driver.store(&counting);
    {
        auto resource = DeviceMemoryResource::from_handle(raw, device, {.take_ownership = true});
        EXPECT_TRUE(resource->owns_pool());
        MemoryPool taken = resource->memory_pool();
        resource.reset();  // the MemoryPool holds it
        EXPECT_FALSE(taken.owns_handle());
        EXPECT_EQ(taken.handle(), raw);
        EXPECT_NE(taken.description().find("adopted memory pool"), std::string::npos) << taken.description();
        EXPECT_NE(taken.description().find("of device 0"), std::string::npos) << taken.description();
        MemoryPool copy = taken;
        allocate_from(raw, device);
        copy.set_release_threshold(1 << 20);
        EXPECT_EQ(taken.release_threshold(), 1u << 20);
        EXPECT_EQ(taken.used_mem_current(), 0u);
        taken.reset();
        EXPECT_EQ(destroys.load(), 0) << "destroyed while a copy lives";
    }
    const bool destroyed = test::wait_until([] { return destroys.load() >= 1; }, std::chrono::seconds(10));
    detail::loaded_driver.store(real_driver);
    EXPECT_TRUE(destroyed) << "the taken pool was not destroyed with its last copy";
    EXPECT_EQ(destroys.load(), 1);
}

TEST(MemoryPoolFromHandleGpu, ABorrowedPoolIsStillTheCallersAfterTheWrapperGoes) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    const CUmemoryPool raw = raw_pool(device);
    ASSERT_NE(raw, nullptr);
    {
        MemoryPool borrowed = DeviceMemoryResource::from_handle(raw, device)->memory_pool();
        EXPECT_FALSE(borrowed.owns_handle());
        EXPECT_NE(borrowed.description().find("borrowed memory pool"), std::string::npos);
        allocate_from(raw, device);
        borrowed.trim_to(0);
        borrowed.close();
    }
    allocate_from(raw, device);  // still usable: nothing destroyed it
    cuuint64_t threshold = 0;
    EXPECT_EQ(detail::driver().cuMemPoolGetAttribute(raw, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
              CUDA_SUCCESS);
    EXPECT_EQ(detail::driver().cuMemPoolDestroy(raw), CUDA_SUCCESS);
}

TEST(MemoryPoolFromHandleGpu, TheNamedDeviceIsCheckedAgainstThePoolsAccess) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    CUmemoryPool default_pool = nullptr;
    ASSERT_EQ(detail::driver().cuDeviceGetDefaultMemPool(&default_pool, device.handle()), CUDA_SUCCESS);
    EXPECT_NE(DeviceMemoryResource::from_handle(default_pool, device)->memory_pool().description().find("of device 0"),
              std::string::npos);
    try {
        DeviceMemoryResource::from_handle(default_pool, device, {.take_ownership = true});
        ADD_FAILURE() << "the default pool was taken over";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("DeviceMemoryResource::from_handle: cannot take ownership of the default"),
                  std::string::npos) << e.what();
    }
    EXPECT_THROW(DeviceMemoryResource::from_handle(nullptr, device), InvalidArgumentError);

    if (Device::all().size() < 2) GTEST_SKIP() << "one device: the two-device part needs two";
    const Device second(1);
    if (!pools_supported(second)) GTEST_SKIP() << "device 1 has no memory pools";
    const CUmemoryPool raw = raw_pool(second);
    ASSERT_NE(raw, nullptr);
    {
        // Device 0 has no access to device 1's pool: named as its device, it is refused.
        try {
            DeviceMemoryResource::from_handle(raw, device);
            ADD_FAILURE() << "device 0 was taken as the device of device 1's pool";
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find("DeviceMemoryResource::from_handle: device 0 is not the device of memory pool"),
                      std::string::npos) << e.what();
        }
        MemoryPool taken = DeviceMemoryResource::from_handle(raw, second, {.take_ownership = true})->memory_pool();
        EXPECT_NE(taken.description().find("of device 1"), std::string::npos) << taken.description();
        allocate_from(raw, second);
    }
}

// The deprecated MemoryPool::from_handle is DeviceMemoryResource::from_handle(...)->memory_pool():
// the same pool, the same refusals, and a pool taken over destroyed once its last copy goes.
TEST(MemoryPoolFromHandleGpu, TheDeprecatedMemoryPoolFromHandleForwards) {
    CUDACORE_REQUIRE_GPU();
    const Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    const CUmemoryPool raw = raw_pool(device);
    ASSERT_NE(raw, nullptr);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_THROW(MemoryPool::from_handle(nullptr, device), InvalidArgumentError);
    MemoryPool taken = MemoryPool::from_handle(raw, device, {.take_ownership = true});
#pragma GCC diagnostic pop
    EXPECT_EQ(taken.handle(), raw);
    EXPECT_NE(taken.description().find("adopted memory pool of device 0"), std::string::npos) << taken.description();
    taken.set_release_threshold(1 << 20);
    EXPECT_EQ(taken.release_threshold(), 1u << 20);
    allocate_from(raw, device);
}

}  // namespace
