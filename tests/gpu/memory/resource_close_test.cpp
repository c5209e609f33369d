// close() on memory resources and MemoryPool on a real GPU: a closed resource refuses new memory
// and gives back what it keeps (an owned pool's reserve, a cache's blocks), while buffers
// allocated before keep working and are freed as usual; a closed MemoryPool object and its copies
// refuse their calls, while reset() lets go of one object's share.
#include "test_support.hpp"

#include "cudacore/cudacore.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

using cudacore::test::expect_invalid;

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ResourceCloseGpu, AnOwnedPoolGivesItsReserveBackAndLiveBuffersKeepWorking) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = DeviceMemoryResource::create_owned_pool(device);
    resource->set_release_threshold(std::numeric_limits<std::uint64_t>::max());  // keep the reserve
    Buffer live = resource->allocate(kMiB, stream);
    resource->allocate(64 * kMiB, stream).close(stream);
    stream.sync();
    ASSERT_GE(resource->reserved_memory(), 64 * kMiB);
    resource->close();
    EXPECT_TRUE(resource->is_closed());
    stream.sync();
    // What is left reserved is at most what the live buffer needs.
    EXPECT_LT(resource->reserved_memory(), 64 * kMiB);
    EXPECT_GE(resource->used_memory(), kMiB);
    const std::string closed = "MemoryResource::allocate: " + resource->description() + " is closed";
    expect_invalid([&] { resource->allocate(kMiB, stream); }, {closed.c_str()});
    expect_invalid([&] { resource->allocate_pointer(kMiB, stream.handle()); }, {"MemoryResource::allocate_pointer"});
    // The buffer allocated before still works, and is freed into the closed pool.
    live.fill_uint32(0x01020304u, stream);
    std::vector<std::uint32_t> host(kMiB / 4);
    live.copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(host.front(), 0x01020304u);
    EXPECT_EQ(host.back(), 0x01020304u);
    live.close(stream);
    stream.sync();
    EXPECT_EQ(resource->used_memory(), 0u);
    resource->close();  // nothing more
}

TEST(ResourceCloseGpu, ACachingResourceGivesItsBlocksBack) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = CachingMemoryResource::create(device);
    resource->allocate(kMiB, stream).close(stream);
    ASSERT_GT(resource->statistics().bytes_cached, 0u);
    resource->close();
    EXPECT_EQ(resource->statistics().bytes_cached, 0u);
    EXPECT_EQ(resource->statistics().bytes_reserved, 0u);
    expect_invalid([&] { resource->allocate(kMiB, stream); }, {"is closed"});
}

TEST(ResourceCloseGpu, PinnedAndManagedResourcesRefuseOnceClosed) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer host = pinned->allocate(4096, stream);
    pinned->close();
    expect_invalid([&] { pinned->allocate(16, stream); }, {"is closed"});
    host.span<int>()[0] = 5;  // still valid
    EXPECT_EQ(host.span<int>()[0], 5);
    host.close();
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    managed->close();
    expect_invalid([&] { managed->allocate(16, stream); }, {"is closed"});
}

TEST(ResourceCloseGpu, TheDevicesDefaultResourceRefusesCloseAndKeepsAllocating) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto shared_default = device.memory_resource();
    expect_invalid([&] { shared_default->close(); },
                   {"MemoryResource::close", "default resource, shared by the whole process"});
    EXPECT_FALSE(shared_default->is_closed());
    Buffer buffer = device.allocate(4096, stream);  // the process's default still works
    buffer.fill_byte(7, stream);
    stream.sync();
    EXPECT_EQ(buffer.size(), 4096u);
}

TEST(MemoryPoolCloseGpu, AClosedPoolObjectAndItsCopiesRefuseAndResetDropsOneShare) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto resource = DeviceMemoryResource::create_owned_pool(device);
    std::weak_ptr<DeviceMemoryResource> watch = resource;
    MemoryPool pool = resource->memory_pool();
    MemoryPool copy = pool;
    resource.reset();  // the pool objects hold the resource now
    pool.close();
    EXPECT_TRUE(pool.is_closed());
    EXPECT_EQ(pool.handle(), nullptr);
    const std::string pool_closed = "MemoryPool::used_mem_current: " + pool.description() + " is closed";
    expect_invalid([&] { pool.used_mem_current(); }, {pool_closed.c_str()});
    expect_invalid([&] { pool.trim_to(0); }, {"MemoryPool::trim_to"});
    expect_invalid([&] { pool.attributes(); }, {"MemoryPool::attributes"});
    pool.close();  // nothing more
    // The copy is closed with it, and it was the last holder: the resource (and its pool) went.
    EXPECT_TRUE(copy.is_closed());
    expect_invalid([&] { copy.used_mem_current(); }, {pool_closed.c_str()});
    EXPECT_TRUE(watch.expired());

    // reset() lets go of one object's share: another copy keeps the pool.
    auto second = DeviceMemoryResource::create_owned_pool(device);
    std::weak_ptr<DeviceMemoryResource> second_watch = second;
    MemoryPool dropped = second->memory_pool();
    MemoryPool kept = dropped;
    second.reset();
    dropped.reset();
    EXPECT_FALSE(dropped.is_closed());
    EXPECT_FALSE(second_watch.expired());
    EXPECT_EQ(kept.used_mem_current(), 0u);
}

}  // namespace
