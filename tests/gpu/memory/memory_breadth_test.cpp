// Managed memory advice and batched prefetch (checked through the driver's range attributes),
// registered host memory written by a kernel, a batch of 1,000 small copies, 2-byte fills and a
// DLPack round trip that keeps the producer alive, on a GPU.
#include "breadth_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/dlpack.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/managed_memory.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/registered_host_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

bool concurrent_managed(const Device& device) {
    return device.attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
}

TEST(ManagedControlsGpu, AdviceAndBatchedPrefetchChangeWherePagesLive) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!concurrent_managed(device)) GTEST_SKIP() << "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0";
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    Stream stream = device.create_stream();
    std::vector<Buffer> buffers;
    for (int i = 0; i < 8; ++i) buffers.push_back(managed->allocate(2 * MiB, stream));
    EXPECT_TRUE(buffers[0].is_managed());
    EXPECT_TRUE(managed->is_managed());

    advise(buffers[0], ManagedAdvice::set_read_mostly);
    advise(buffers[1], ManagedAdvice::set_preferred_location, MemoryLocation::device(0));
    advise(buffers[2], ManagedAdvice::set_preferred_location, MemoryLocation::host());
    advise(buffers[3], ManagedAdvice::set_accessed_by, MemoryLocation::device(0));
    EXPECT_TRUE(range_attributes(buffers[0]).read_mostly);
    EXPECT_FALSE(range_attributes(buffers[1]).read_mostly);
    EXPECT_EQ(range_attributes(buffers[1]).preferred_location, MemoryLocation::device(0));
    EXPECT_EQ(range_attributes(buffers[2]).preferred_location, MemoryLocation::host());
    EXPECT_EQ(range_attributes(buffers[3]).accessed_by, std::vector<int>{0});
    advise(buffers[1], ManagedAdvice::unset_preferred_location);
    EXPECT_FALSE(range_attributes(buffers[1]).preferred_location.has_value());

    prefetch_batch(buffers, MemoryLocation::device(0), stream);
    stream.sync();
    for (const Buffer& buffer : buffers)
        EXPECT_EQ(range_attributes(buffer).last_prefetch_location, MemoryLocation::device(0));
    prefetch_batch(std::span(buffers).subspan(0, 4), MemoryLocation::host(), stream);
    stream.sync();
    for (std::size_t i = 0; i < buffers.size(); ++i)
        EXPECT_EQ(range_attributes(buffers[i]).last_prefetch_location,
                  i < 4 ? MemoryLocation::host() : MemoryLocation::device(0))
            << "buffer " << i;

    // Discarding and prefetching again leaves them on the device; plain discard is accepted.
    discard_and_prefetch_batch(std::span(buffers).subspan(0, 4), MemoryLocation::device(0), stream);
    discard_batch(std::span(buffers).subspan(4), stream);
    stream.sync();
    EXPECT_EQ(range_attributes(buffers[0]).last_prefetch_location, MemoryLocation::device(0));
}

TEST(ManagedControlsGpu, ResourceOptionsAdviseEveryAllocation) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!concurrent_managed(device)) GTEST_SKIP() << "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0";
    auto managed = std::make_shared<ManagedMemoryResource>(
        device, ManagedMemoryResourceOptions{.preferred_location = MemoryLocation::device(0),
                                             .read_mostly = true});
    Stream stream = device.create_stream();
    Buffer buffer = managed->allocate(MiB, stream);
    const ManagedRangeAttributes attributes = range_attributes(buffer);
    EXPECT_EQ(attributes.preferred_location, MemoryLocation::device(0));
    EXPECT_TRUE(attributes.read_mostly);
    // Device memory is not managed; the driver agrees with the resource.
    Buffer plain = device.allocate(MiB, stream);
    EXPECT_FALSE(plain.is_managed());
    EXPECT_THROW(advise(plain, ManagedAdvice::set_read_mostly), DriverError);
}

TEST(RegisteredHostMemoryGpu, KernelWritesIntoRegisteredMemory) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ObjectCode code = test::compile_breadth_kernels(device);
    Kernel write_sequence = code.get_kernel("write_sequence");
    Stream stream = device.create_stream();
    const std::size_t count = MiB / sizeof(unsigned);
    std::vector<unsigned> host(count, 0);
    {
        Buffer registered = register_host_memory(host.data(), host.size() * sizeof(unsigned), device);
        EXPECT_TRUE(registered.is_device_accessible());
        EXPECT_TRUE(registered.is_host_accessible());
        EXPECT_EQ(registered.data(), host.data());
        Buffer copy = registered;
        launch(stream, LaunchConfig{.grid = 256, .block = 256}, write_sequence, registered,
               static_cast<unsigned long long>(count), 11u);
        stream.sync();
        for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(host[i], 11u + i) << i;
        // Registering the same memory twice is the driver's error, named.
        EXPECT_THROW(register_host_memory(host.data(), 4096, device), DriverError);
    }
    // Unregistered with the last copy: registering again succeeds.
    Buffer again = register_host_memory(host.data(), host.size() * sizeof(unsigned), device);
    again.close();
    EXPECT_TRUE(again.is_closed());
}

TEST(BatchedCopyGpu, AThousandSmallCopiesInOneCall) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    constexpr std::size_t count = 1000, words = 64;  // 256 bytes each
    const std::size_t bytes = words * sizeof(std::uint32_t);
    std::vector<std::uint32_t> data(count * words);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 13 + 5);
    std::vector<Buffer> sources, targets;
    for (std::size_t i = 0; i < count; ++i) {
        sources.push_back(device.allocate(bytes, stream));
        sources.back().copy_from(std::span(data).subspan(i * words, words), stream);
        targets.push_back(device.allocate(bytes, stream));
        targets.back().fill_byte(0, stream);
    }
    // Each copy goes to the mirrored target, so a copy that lands in the wrong place shows.
    std::vector<CopyPair> copies;
    for (std::size_t i = 0; i < count; ++i) copies.push_back({targets[count - 1 - i], sources[i]});
    copy_batch(copies, stream);
    std::vector<std::uint32_t> back(data.size());
    for (std::size_t i = 0; i < count; ++i)
        targets[count - 1 - i].copy_to(std::span(back).subspan(i * words, words), stream);
    stream.sync();
    EXPECT_EQ(back, data);

    // Mismatched sizes are refused before anything is enqueued, naming the pair.
    copies[500].destination = device.allocate(bytes / 2, stream);
    try {
        copy_batch(copies, stream);
        ADD_FAILURE() << "no error";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("copy 500"), std::string::npos) << e.what();
    }
}

// Copies from `source` (its bytes in `source_bytes`) to `destination`, as (source offset,
// destination offset, size) triples, into `expected` as well.
struct CopyPlan {
    std::vector<CopyPair> copies;
    std::vector<std::uint8_t> expected;
    void add(const Buffer& source, std::span<const std::uint8_t> source_bytes,
             const Buffer& destination, std::size_t from, std::size_t to, std::size_t size) {
        copies.push_back({Buffer::wrap_unowned(destination.handle() + to, size,
                                               destination.memory_resource()), Buffer::wrap_unowned(source.handle() + from, size, source.memory_resource())});
        std::copy_n(source_bytes.begin() + from, size, expected.begin() + to);
    }
};

std::vector<std::uint8_t> byte_pattern(std::size_t size, unsigned seed) {
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + seed + i / 251);
    return bytes;
}

// Every route through copy_batch in one batch: the kernels' 16-byte, 4-byte and byte copies
// (aligned and unaligned ends), more pairs than one launch takes, a pair just over the kernels'
// size limit and a pair from pinned host memory (both copied by the driver), and an empty pair.
TEST(BatchedCopyGpu, KernelAndDriverRoutesInOneBatch) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    constexpr std::size_t size = 2 * MiB, limit = copy_batch_kernel_limit;
    const std::vector<std::uint8_t> source_bytes = byte_pattern(size, 3);
    Buffer source = device.allocate(size, stream);
    Buffer destination = device.allocate(size, stream);
    source.copy_from(source_bytes, stream);
    destination.fill_byte(0, stream);
    auto pinned_resource = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned = pinned_resource->allocate(4096, stream);
    const std::vector<std::uint8_t> pinned_bytes = byte_pattern(4096, 101);
    std::copy(pinned_bytes.begin(), pinned_bytes.end(),
              reinterpret_cast<std::uint8_t*>(pinned.data()));

    CopyPlan plan;
    plan.expected.assign(size, 0);
    plan.add(source, source_bytes, destination, 0, 0, 1);
    plan.add(source, source_bytes, destination, 1, 17, 3);           // bytes, unaligned
    plan.add(source, source_bytes, destination, 5, 40, 77);          // bytes, unaligned
    plan.add(source, source_bytes, destination, 64, 128, 256);       // 16-byte words
    plan.add(source, source_bytes, destination, 4, 2052, 1002);      // 4-byte words and a tail
    plan.add(source, source_bytes, destination, 48, 4112, 1000);     // 16-byte words and a tail
    plan.add(source, source_bytes, destination, 8192, 8192, limit);  // the kernels' largest
    plan.add(source, source_bytes, destination, 80000, 80001, limit + 1);  // the driver's
    plan.copies.push_back({device.allocate(0, stream), device.allocate(0, stream)});  // nothing
    for (std::size_t i = 0; i < 3000; ++i)  // three launches' worth of 8-byte pairs
        plan.add(source, source_bytes, destination, 400000 + 8 * i, 1000000 + 8 * (2999 - i), 8);
    plan.copies.push_back({Buffer::wrap_unowned(destination.handle() + 1500000, 1000,
                                                destination.memory_resource()), Buffer::wrap_unowned(pinned.handle() + 3, 1000, pinned_resource)});
    std::copy_n(pinned_bytes.begin() + 3, 1000, plan.expected.begin() + 1500000);

    copy_batch(plan.copies, stream);
    std::vector<std::uint8_t> back(size);
    destination.copy_to(back, stream);
    stream.sync();
    for (std::size_t i = 0; i < size; ++i)
        ASSERT_EQ(back[i], plan.expected[i]) << "byte " << i;

    // The copy engines alone, when asked for: the same result.
    destination.fill_byte(0, stream);
    copy_batch(plan.copies, stream, {.prefer_overlap_with_compute = true});
    destination.copy_to(back, stream);
    stream.sync();
    EXPECT_TRUE(back == plan.expected) << "the copy engines gave other bytes";
}

// A batch captured into a graph copies what the sources hold when the graph runs.
TEST(BatchedCopyGpu, CapturedBatchCopiesAtEachReplay) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    constexpr std::size_t count = 100, bytes = 256;
    Buffer source = device.allocate(count * bytes, stream);
    Buffer destination = device.allocate(count * bytes, stream);
    std::vector<CopyPair> copies;
    for (std::size_t i = 0; i < count; ++i)
        copies.push_back({Buffer::wrap_unowned(destination.handle() + (count - 1 - i) * bytes, bytes,
                                               destination.memory_resource()), Buffer::wrap_unowned(source.handle() + i * bytes, bytes, source.memory_resource())});
    GraphBuilder builder(stream);
    builder.begin();
    copy_batch(copies, builder.stream());
    GraphExec exec = builder.end().instantiate();
    for (unsigned replay = 0; replay < 2; ++replay) {
        const std::vector<std::uint8_t> data = byte_pattern(count * bytes, 11 + replay);
        source.copy_from(data, stream);
        destination.fill_byte(0, stream);
        exec.launch(stream);
        std::vector<std::uint8_t> back(count * bytes);
        destination.copy_to(back, stream);
        stream.sync();
        for (std::size_t i = 0; i < count; ++i)
            ASSERT_TRUE(std::equal(back.begin() + (count - 1 - i) * bytes,
                                   back.begin() + (count - i) * bytes, data.begin() + i * bytes))
                << "replay " << replay << ", pair " << i;
    }
}

TEST(BufferFillGpu, TwoByteFill) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(1000, stream);
    buffer.fill_uint16(0x1234, stream);
    std::vector<std::uint16_t> back(500);
    buffer.copy_to(back, stream);
    stream.sync();
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], 0x1234) << i;
    Buffer odd = device.allocate(999, stream);
    EXPECT_THROW(odd.fill_uint16(1, stream), InvalidArgumentError);
}

TEST(DLPackGpu, RoundTripKeepsTheProducerAlive) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 0)
        GTEST_SKIP() << "device 0 has no memory pools";
    ObjectCode code = test::compile_breadth_kernels(device);
    Kernel write_sequence = code.get_kernel("write_sequence");
    // An owned pool, so its used memory shows whether the producer's buffer is still alive.
    auto pool = DeviceMemoryResource::create_owned_pool(device);
    Stream stream = device.create_stream();
    const std::size_t count = 256 * 1024;
    Buffer imported;
    {
        Buffer original = pool->allocate(count * sizeof(unsigned), stream);
        DLPackLayout layout;
        layout.shape = {256, 1024};
        layout.dtype = {kDLUInt, 32, 1};
        DLManagedTensor* tensor = to_dlpack(original, layout);
        EXPECT_EQ(tensor->dl_tensor.device.device_type, kDLCUDA);
        EXPECT_EQ(tensor->dl_tensor.device.device_id, 0);
        imported = from_dlpack(tensor);
    }
    stream.sync();
    EXPECT_GE(pool->memory_pool().used_mem_current(), count * sizeof(unsigned))
        << "the producer's buffer was freed while the import lives";
    EXPECT_TRUE(imported.is_device_accessible());
    EXPECT_FALSE(imported.is_host_accessible());
    launch(stream, LaunchConfig{.grid = 256, .block = 256}, write_sequence, imported,
           static_cast<unsigned long long>(count), 3u);
    std::vector<unsigned> back(count);
    imported.copy_to(back, stream);
    stream.sync();
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(back[i], 3u + i) << i;
    imported = Buffer();
    stream.sync();
    EXPECT_EQ(pool->memory_pool().used_mem_current(), 0u) << "the import did not release the producer";
}

}  // namespace
