// cuda.core's examples, the calls a port of them needs, on a GPU: a buffer handed from a producer
// stream to a consumer that frees it (buffer_deallocation_stream), Stream::close, the copy size
// rule and copy_to without a destination, virtual memory of allocation type managed
// (vmm_memory_example) and per-copy attributes in a batch (batched_memcpy).
#include "test_support.hpp"

#include "cudacore/batched_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/virtual_memory_resource.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

template <class Call>
std::string invalid_argument_message(Call&& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no InvalidArgumentError";
    return {};
}

#define EXPECT_CONTAINS(text, part)                                \
    EXPECT_NE(std::string(text).find(part), std::string::npos) \
        << "missing \"" << (part) << "\" in: " << (text)

bool all_bytes(const Buffer& host, std::uint8_t value) {
    const auto bytes = host.span<std::uint8_t>();
    return std::all_of(bytes.begin(), bytes.end(), [&](std::uint8_t b) { return b == value; });
}

// buffer_deallocation_stream.py: produced (allocated and filled) on one stream, handed to a
// consumer stream that waits for the producer's event, copies it out and frees it there.
TEST(DeallocationStreamGpu, ProducerToConsumerAsInCudaCoresExample) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream producer = device.create_stream();
    Stream consumer = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer output = pinned->allocate(4096, consumer);
    std::fill_n(static_cast<std::uint8_t*>(output.data()), 4096, 0);

    Buffer buffer = device.allocate(4096, producer);
    buffer.fill_byte(42, producer);
    const Event ready = producer.record();
    EXPECT_EQ(buffer.deallocation_stream(), producer);
    consumer.wait(ready);
    buffer.set_deallocation_stream(consumer);
    EXPECT_EQ(buffer.deallocation_stream(), consumer);
    buffer.copy_to(output, consumer);
    buffer.close();  // no stream given: freed on the consumer, after the copy
    EXPECT_TRUE(buffer.is_closed());
    consumer.sync();
    EXPECT_TRUE(all_bytes(output, 42));
}

// As in cuda.core, set_deallocation_stream synchronizes nothing and adds no dependency: a
// consumer stream stays idle while the producer is held up.
TEST(DeallocationStreamGpu, SettingTheStreamAddsNoDependency) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream producer = device.create_stream();
    Stream consumer = device.create_stream();
    Buffer buffer = device.allocate(1024, producer);
    std::atomic<bool> release{false};
    producer.launch_host_func([&release] {
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    buffer.fill_byte(7, producer);  // queued behind the held-up host function
    buffer.set_deallocation_stream(consumer);
    EXPECT_TRUE(consumer.is_done());
    EXPECT_FALSE(producer.is_done());
    release = true;
    consumer.wait(producer.record());  // the caller's ordering, before the free
    buffer.close();
    consumer.sync();
    producer.sync();
}

// The buffer holds its deallocation stream: the caller's Stream may be closed before the free.
TEST(DeallocationStreamGpu, TheStreamOutlivesTheCallersClose) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream consumer = device.create_stream();
    const std::weak_ptr<detail::StreamBox> held = detail::box_of(consumer);
    Buffer buffer = device.allocate(1 << 20, consumer);
    buffer.fill_byte(1, consumer);
    consumer.close();
    EXPECT_FALSE(held.expired());
    buffer.deallocation_stream().sync();
    buffer.close();
    EXPECT_TRUE(held.expired());  // the last holder went: the stream was destroyed
}

// Stream::reset: this object lets go; work queued before still runs; copies keep the stream.
// Stream::close: the stream ends for every holder, and the work queued before still runs.
TEST(StreamCloseGpu, ResetLetsGoWhileCopiesKeepTheStreamAndCloseEndsItForAll) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Stream copy = stream;
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer host = pinned->allocate(1 << 20, copy);
    Buffer buffer = device.allocate(1 << 20, stream);
    buffer.fill_byte(9, stream);
    buffer.copy_to(host, stream);
    const Event done = stream.record();
    stream.reset();
    EXPECT_FALSE(stream.is_closed());  // empty, as moved from: the stream itself is not closed
    EXPECT_EQ(stream.handle(), nullptr);
    EXPECT_CONTAINS(invalid_argument_message([&] { stream.sync(); }), "Stream::sync");
    EXPECT_CONTAINS(invalid_argument_message([&] { buffer.fill_byte(0, stream); }),
                    "Buffer::fill_byte");
    copy.sync();  // the copy still works, on the same stream
    done.sync();
    EXPECT_TRUE(all_bytes(host, 9));

    buffer.fill_byte(4, copy);
    buffer.copy_to(host, copy);
    const Event second = copy.record();
    Stream other_copy = copy;
    copy.close();
    EXPECT_TRUE(other_copy.is_closed());  // close ends it for every holder
    EXPECT_EQ(other_copy.handle(), nullptr);
    const std::string message = invalid_argument_message([&] { other_copy.sync(); });
    EXPECT_CONTAINS(message, "Stream::sync");
    EXPECT_CONTAINS(message, "on device 0 is closed");
    second.sync();  // the work queued before the close ran
    EXPECT_TRUE(all_bytes(host, 4));
    buffer.close(device.default_stream());
}

TEST(StreamCloseGpu, ClosingTheLastHolderDestroysTheStream) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream other = device.create_stream();
    Stream stream = device.create_stream();
    const std::weak_ptr<detail::StreamBox> box = detail::box_of(stream);
    Buffer buffer = device.allocate(1 << 20, other);  // held by the buffer: `other`, not `stream`
    stream.wait(other);
    buffer.fill_byte(3, stream);
    const Event done = stream.record();
    stream.close();
    EXPECT_TRUE(box.expired());  // its last holder: destroyed (cuStreamDestroy) at close
    other.wait(done);            // the fill queued before the close still runs
    std::vector<std::uint8_t> back(1 << 20);
    buffer.copy_to(back, other);
    other.sync();
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](std::uint8_t b) { return b == 3; }));
}

// cuda.core's copy rule: equal sizes. vmm_memory_example copies 1 KiB into 4 KiB: refused here
// as in cuda.core, and nothing is written.
TEST(CopySizesGpu, OneKibibyteIntoFourIsRefusedAndNothingIsWritten) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer kib = device.allocate(1024, stream);
    Buffer four_kib = device.allocate(4096, stream);
    kib.fill_byte(1, stream);
    four_kib.fill_byte(2, stream);
    const std::string message = invalid_argument_message([&] { four_kib.copy_from(kib, stream); });
    EXPECT_CONTAINS(message, "1024 bytes");
    EXPECT_CONTAINS(message, "4096 bytes");
    std::vector<std::uint8_t> back(4096);
    four_kib.copy_to(back, stream);
    stream.sync();
    EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](std::uint8_t b) { return b == 2; }));
}

// cuda.core's copy_to without a destination: a new buffer of the same size and resource.
TEST(CopySizesGpu, CopyToWithoutADestinationAllocatesOne) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer source = device.allocate(4096, stream);
    source.fill_uint32(0xdeadbeef, stream);
    Buffer copy = source.copy_to(stream);
    EXPECT_NE(copy.handle(), source.handle());
    EXPECT_EQ(copy.size(), source.size());
    EXPECT_EQ(copy.memory_resource().get(), source.memory_resource().get());
    std::vector<std::uint32_t> back(1024);
    copy.copy_to(back, stream);
    stream.sync();
    EXPECT_TRUE(std::all_of(back.begin(), back.end(),
                            [](std::uint32_t w) { return w == 0xdeadbeef; }));
    Buffer unowned = Buffer::wrap_unowned(source.handle(), 4096);
    EXPECT_CONTAINS(invalid_argument_message([&] { (void)unowned.copy_to(stream); }),
                    "a destination buffer must be provided");
}

// vmm_memory_example: virtual memory of allocation type managed either works (a round trip
// through it) or fails with an error that names managed virtual memory, as the example allows.
TEST(VirtualMemoryGpu, ManagedAllocationTypeWorksOrSaysWhy) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
        GTEST_SKIP() << "device 0 has no virtual memory management";
    Stream stream = device.create_stream();
    VirtualMemoryResourceOptions options;
    options.allocation_type = VirtualMemoryAllocationType::managed;
    try {
        auto resource = std::make_shared<VirtualMemoryResource>(device, options);
        EXPECT_TRUE(resource->is_managed());
        EXPECT_EQ(resource->description(), "managed virtual memory of device 0");
        Buffer buffer = resource->allocate(4096, stream);
        EXPECT_TRUE(buffer.is_managed());
        std::vector<std::uint8_t> bytes(4096, 77), back(4096);
        buffer.copy_from(bytes, stream);
        buffer.copy_to(back, stream);
        stream.sync();
        EXPECT_EQ(back, bytes);
        std::cout << "managed virtual memory: allocated and copied\n";
    } catch (const DriverError& e) {
        EXPECT_CONTAINS(e.what(), "managed virtual memory of device 0");
        std::cout << "managed virtual memory refused by the driver: " << e.what() << "\n";
    }
    // The default stays pinned.
    auto pinned = std::make_shared<VirtualMemoryResource>(device);
    EXPECT_FALSE(pinned->is_managed());
    EXPECT_EQ(pinned->description(), "virtual memory of device 0");
}

// batched_memcpy.py, part 3: per-copy attributes (STREAM / ANY alternating), pinned to device.
TEST(BatchedCopyAttributesGpu, HeterogeneousBatchAsInCudaCoresExample) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    std::vector<CopyPair> copies;
    for (int i = 0; i < 4; ++i) {
        Buffer source = pinned->allocate(4096, stream);
        std::fill_n(static_cast<std::uint8_t*>(source.data()), 4096,
                    static_cast<std::uint8_t>(100 + i));
        CopyAttributes attributes;
        attributes.source_access_order =
            i % 2 == 0 ? CopySourceAccessOrder::stream : CopySourceAccessOrder::any;
        copies.push_back({device.allocate(4096, stream), source, attributes});
    }
    // Device-to-device pairs small enough for the kernels go to the driver when they carry
    // attributes; one with the defaults in between.
    Buffer small_source = device.allocate(256, stream);
    small_source.fill_byte(5, stream);
    copies.push_back({device.allocate(256, stream), small_source, {.source_access_order = CopySourceAccessOrder::any}});
    copies.push_back({device.allocate(256, stream), small_source});
    stream.sync();  // order `any`: no earlier work may still use a source (the fill above)
    copy_batch(copies, stream);
    for (std::size_t i = 0; i < copies.size(); ++i) {
        std::vector<std::uint8_t> back(copies[i].destination.size());
        copies[i].destination.copy_to(back, stream);
        stream.sync();
        const std::uint8_t expected = i < 4 ? static_cast<std::uint8_t>(100 + i) : 5;
        EXPECT_TRUE(std::all_of(back.begin(), back.end(),
                                [&](std::uint8_t b) { return b == expected; }))
            << "copy " << i;
    }
}

// batched_memcpy.py, part 4: managed buffers with location hints (source on the device,
// destination on the host).
TEST(BatchedCopyAttributesGpu, LocationHintsForManagedMemory) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    std::vector<CopyPair> copies;
    for (int i = 0; i < 2; ++i) {
        Buffer source = managed->allocate(4096, stream);
        source.fill_byte(static_cast<std::uint8_t>(200 + i), stream);
        copies.push_back({managed->allocate(4096, stream), source, {.source_location_hint = MemoryLocation::device(0),
                           .destination_location_hint = MemoryLocation::host()}});
    }
    copy_batch(copies, stream);
    stream.sync();
    for (int i = 0; i < 2; ++i)
        EXPECT_TRUE(all_bytes(copies[i].destination, static_cast<std::uint8_t>(200 + i)))
            << "copy " << i;
}

}  // namespace
