// The device's pool resource typed as a DeviceMemoryResource, a pool made elsewhere allocated
// from through DeviceMemoryResource::from_handle, and managed memory attached to a stream, to the
// host, and host-attached at allocation.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/buffer_slice.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/managed_attach.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/pointer_attributes.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstdint>
#include <vector>

namespace {

using namespace cudacore;

bool pools_supported(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
}

TEST(PoolResourceGpu, TheDevicesPoolResourceIsTypedAndIsMemoryResource) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) {
        EXPECT_THROW(device.memory_pool_resource(), InvalidArgumentError);
        GTEST_SKIP() << "device 0 has no memory pools";
    }
    std::shared_ptr<DeviceMemoryResource> pool = device.memory_pool_resource();
    EXPECT_EQ(pool.get(), device.memory_resource().get()) << "the same object";
    const std::uint64_t before = pool->release_threshold();  // no cast needed
    pool->set_release_threshold(before);
    EXPECT_EQ(pool->release_threshold(), before);
}

TEST(PoolResourceGpu, ThePoolsOwnDeviceInAnAccessListIsAnError) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    auto pool = DeviceMemoryResource::create_owned_pool(device);
    EXPECT_EQ(pool->access_of(device), MemoryAccess::read_write);
    for (MemoryAccess access : {MemoryAccess::read, MemoryAccess::read_write, MemoryAccess::none}) {
        try {
            pool->set_access({device}, access);
            ADD_FAILURE() << "the pool's own device was accepted in set_access";
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find("own device"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(pool->set_peer_accessible_by({device}), InvalidArgumentError);
    pool->set_access({}, MemoryAccess::read);  // nothing listed: nothing changes
    EXPECT_EQ(pool->access_of(device), MemoryAccess::read_write);
}

TEST(PoolResourceGpu, APoolMadeElsewhereIsAllocatedFromThroughFromHandle) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!pools_supported(device)) GTEST_SKIP() << "device 0 has no memory pools";
    const auto& api = detail::driver();
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device.ordinal();
    CUmemoryPool raw = nullptr;
    ASSERT_EQ(api.cuMemPoolCreate(&raw, &props), CUDA_SUCCESS);
    {
        auto borrowed = DeviceMemoryResource::from_handle(raw, device);
        EXPECT_EQ(borrowed->pool(), raw);
        EXPECT_FALSE(borrowed->owns_pool());
        Stream stream = device.create_stream();
        Buffer buffer = borrowed->allocate(1 << 20, stream);
        buffer.fill_uint32(0xABCD1234u, stream);
        std::vector<std::uint32_t> back(4);
        slice(buffer, 0, 16).copy_to(back, stream);
        stream.sync();
        EXPECT_EQ(back[3], 0xABCD1234u);
        EXPECT_EQ(pointer_attributes(buffer.handle()).pool, raw) << "allocated from that pool";
        buffer.close(stream);
        stream.sync();
    }
    // Not taken: the pool is still ours; taken: the resource destroys it.
    auto adopted = DeviceMemoryResource::from_handle(raw, device, {.take_ownership = true});
    EXPECT_TRUE(adopted->owns_pool());
    adopted.reset();
    EXPECT_THROW(DeviceMemoryResource::from_handle(nullptr, device), InvalidArgumentError);
}

TEST(ManagedAttachGpu, AttachedToOneStreamToTheHostAndGloballyTheDataStays) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)) GTEST_SKIP() << "no managed memory";
    Stream stream = device.create_stream();
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    Buffer buffer = managed->allocate(1 << 16, stream);
    buffer.fill_uint32(7u, stream);
    attach(buffer, ManagedAttach::single, stream);
    stream.sync();
    EXPECT_EQ(buffer.span<std::uint32_t>()[100], 7u) << "the host reads memory of a synced stream";
    attach(buffer, ManagedAttach::host, stream);
    stream.sync();
    buffer.span<std::uint32_t>()[0] = 9u;
    attach(slice(buffer, 4096), ManagedAttach::global, stream);  // a slice attaches its allocation
    std::vector<std::uint32_t> back(4);
    slice(buffer, 0, 16).copy_to(back, stream);
    stream.sync();
    EXPECT_EQ(back[0], 9u);

    Buffer device_memory = device.allocate(4096, stream);
    EXPECT_THROW(attach(device_memory, ManagedAttach::single, stream), InvalidArgumentError);
    stream.sync();
}

TEST(ManagedAttachGpu, HostAttachedAllocationsStartOnTheHost) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)) GTEST_SKIP() << "no managed memory";
    auto host_first = std::make_shared<ManagedMemoryResource>(
        device, ManagedMemoryResourceOptions{.attach = ManagedAttach::host});
    Stream stream = device.create_stream();
    Buffer buffer = host_first->allocate(4096, stream);
    EXPECT_EQ(pointer_attributes(buffer.handle()).memory_type, MemoryType::managed);
    for (auto& word : buffer.span<std::uint32_t>()) word = 3u;  // the host, no kernel involved
    attach(buffer, ManagedAttach::single, stream);
    std::vector<std::uint32_t> back(1024);
    buffer.copy_to(back, stream);
    stream.sync();
    EXPECT_EQ(back[1023], 3u);
    EXPECT_THROW(ManagedMemoryResource(device, {.attach = ManagedAttach::single}),
                 InvalidArgumentError);
}

}  // namespace
