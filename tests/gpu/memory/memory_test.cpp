// Buffers and memory resources on a GPU: round trips, stream ordering across streams, pinned and
// managed memory, fills, every error case, pool accounting and lifetime at exit.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

std::vector<std::uint8_t> random_bytes(std::size_t size, std::uint64_t seed) {
    std::vector<std::uint8_t> out(size);
    std::mt19937_64 rng(seed);
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        const std::uint64_t word = rng();
        std::memcpy(out.data() + i, &word, 8);
    }
    for (; i < size; ++i) out[i] = static_cast<std::uint8_t>(rng());
    return out;
}

std::size_t free_device_memory(const Device& device) {
    detail::ContextScope scope(*detail::box_of(device.context()));
    std::size_t free = 0, total = 0;
    detail::check(detail::driver().cuMemGetInfo(&free, &total), "cuMemGetInfo");
    return free;
}

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

#define EXPECT_CONTAINS(text, part) \
    EXPECT_NE(std::string(text).find(part), std::string::npos) << "missing \"" << (part) << "\" in: " << (text)

// Host -> device -> device -> host, for sizes from one byte to 1 GiB.
class RoundTrip : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RoundTrip, RandomDataSurvivesHostDeviceDeviceHost) {
    CUDACORE_REQUIRE_GPU();
    const std::size_t size = GetParam();
    Device device(0);
    if (free_device_memory(device) < 2 * size + 256 * MiB)
        GTEST_SKIP() << "not enough free device memory for 2 x " << size << " bytes";
    Stream stream = device.create_stream();
    const auto input = random_bytes(size, size);
    std::vector<std::uint8_t> output(size, 0);

    Buffer first = device.allocate(size, stream);
    Buffer second = device.allocate(size, stream);
    EXPECT_EQ(first.size(), size);
    EXPECT_TRUE(first.is_device_accessible());
    EXPECT_FALSE(first.is_host_accessible());
    EXPECT_EQ(first.device(), device);
    first.copy_from(input, stream);
    second.copy_from(first, stream);
    first.close(stream);
    second.copy_to(output, stream);
    stream.sync();
    EXPECT_TRUE(first.is_closed());
    EXPECT_TRUE(output == input) << "round trip of " << size << " bytes changed the data";
}

INSTANTIATE_TEST_SUITE_P(Sizes, RoundTrip,
                         ::testing::Values(1, 3, 4096, MiB + 7, 256 * MiB, GiB),
                         [](const auto& info) { return std::to_string(info.param) + "_bytes"; });

TEST(MemoryGpu, PinnedRoundTripThroughDevice) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    const std::size_t size = 8 * MiB + 5;
    Buffer source = pinned->allocate(size, stream);
    Buffer target = pinned->allocate(size, stream);
    EXPECT_TRUE(source.is_host_accessible());
    EXPECT_TRUE(source.is_device_accessible());
    // Pinned memory is bound to no device, as cuda.core reports.
    EXPECT_EQ(source.device_ordinal(), -1);
    EXPECT_EQ(pinned->device_ordinal(), -1);
    EXPECT_CONTAINS(invalid_argument_message([&] { (void)source.device(); }), "bound to no device");
    const auto input = random_bytes(size, 42);
    std::memcpy(source.data(), input.data(), size);
    Buffer on_device = device.allocate(size, stream);
    on_device.copy_from(source, stream);
    target.copy_from(on_device, stream);
    stream.sync();
    auto bytes = target.bytes();
    ASSERT_EQ(bytes.size(), size);
    EXPECT_EQ(std::memcmp(bytes.data(), input.data(), size), 0);
}

TEST(MemoryGpu, StreamOrderedAllocateAndFreeAcrossTwoStreams) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto resource = std::dynamic_pointer_cast<DeviceMemoryResource>(device.memory_resource());
    ASSERT_TRUE(resource);
    Stream producer = device.create_stream();
    Stream consumer = device.create_stream();
    const std::uint64_t used_before = resource->used_memory();
    for (int round = 0; round < 50; ++round) {
        const std::size_t size = (round + 1) * 4096;
        const auto input = random_bytes(size, round);
        std::vector<std::uint8_t> output(size);
        // Allocated and written on the producer; read and freed on the consumer after waiting.
        Buffer buffer = resource->allocate(size, producer);
        buffer.copy_from(input, producer);
        Buffer copy = resource->allocate(size, producer);
        copy.fill_byte(0, producer);
        consumer.wait(producer);
        copy.copy_from(buffer, consumer);
        buffer.close(consumer);
        copy.copy_to(output, consumer);
        copy.close(consumer);
        consumer.sync();
        ASSERT_TRUE(output == input) << "round " << round;
    }
    producer.sync();
    EXPECT_EQ(resource->used_memory(), used_before);
}

TEST(MemoryGpu, BufferIsFreedOnItsAllocationStreamWhenDropped) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    const std::uint64_t used_before = resource->used_memory();
    std::weak_ptr<detail::StreamBox> stream_box;
    {
        Buffer buffer = [&] {
            Stream stream = device.create_stream();  // dropped here: the buffer keeps it
            stream_box = detail::box_of(stream);
            Buffer b = resource->allocate(MiB, stream);
            b.fill_byte(7, stream);
            return b;
        }();
        EXPECT_FALSE(stream_box.expired()) << "the buffer holds the stream it is freed on";
        EXPECT_GE(resource->used_memory(), used_before + MiB);
    }
    EXPECT_TRUE(stream_box.expired());
    device.sync();
    EXPECT_EQ(resource->used_memory(), used_before);
}

TEST(MemoryGpu, TenThousandAllocateFreeCyclesLeaveThePoolWhereItStarted) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    stream.sync();
    const std::uint64_t used_before = resource->used_memory();
    for (int i = 0; i < 10000; ++i) {
        const std::size_t size = std::size_t{1} << (i % 21);  // 1 byte .. 1 MiB
        Buffer buffer = i % 2 ? resource->allocate(size, stream) : device.allocate(size, stream);
        if (i % 3 == 0) buffer.close(stream);  // else freed by the destructor
    }
    stream.sync();
    EXPECT_EQ(resource->used_memory(), used_before);
}

TEST(MemoryGpu, DefaultResourceIsOnePerDeviceOnTheDefaultPool) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto first = device.memory_resource();
    auto second = Device(0).memory_resource();
    EXPECT_EQ(first.get(), second.get());
    auto pool_resource = std::dynamic_pointer_cast<DeviceMemoryResource>(first);
    ASSERT_TRUE(pool_resource);
    CUmemoryPool default_pool = nullptr;
    detail::check(detail::driver().cuDeviceGetDefaultMemPool(&default_pool, device.handle()),
                  "cuDeviceGetDefaultMemPool");
    EXPECT_EQ(pool_resource->pool(), default_pool);
    EXPECT_TRUE(first->is_device_accessible());
    EXPECT_FALSE(first->is_host_accessible());
    EXPECT_EQ(first->device(), device);
}

// The default resource lives as long as the process: its buffers point at it without counting a
// reference. A resource the caller made is held by each of its buffers.
TEST(MemoryGpu, BuffersHoldTheirResourceUnlessItLivesForTheProcess) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer from_default = device.allocate(256, stream);
    EXPECT_EQ(from_default.memory_resource().get(), device.memory_resource().get());
    EXPECT_EQ(from_default.memory_resource().use_count(), 0);

    auto owned = std::make_shared<DeviceMemoryResource>(device, DeviceMemoryResourceOptions{});
    std::weak_ptr<DeviceMemoryResource> watch = owned;
    Buffer from_owned = owned->allocate(256, stream);
    EXPECT_EQ(from_owned.memory_resource().get(), owned.get());
    owned.reset();
    EXPECT_FALSE(watch.expired()) << "the buffer must keep its resource alive";
    from_owned.close(stream);
    EXPECT_TRUE(watch.expired());
    from_default.close(stream);
    stream.sync();
}

TEST(MemoryGpu, ReleaseThresholdIsConfigurable) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    const std::uint64_t original = resource->release_threshold();
    resource->set_release_threshold(64 * MiB);
    EXPECT_EQ(resource->release_threshold(), 64 * MiB);
    auto configured = std::make_shared<DeviceMemoryResource>(
        device, DeviceMemoryResourceOptions{.release_threshold = 32 * MiB});
    EXPECT_EQ(configured->release_threshold(), 32 * MiB);
    EXPECT_EQ(resource->release_threshold(), 32 * MiB) << "one default pool per device";

    // With a threshold of 0 and a trim, freed memory goes back to the driver.
    Stream stream = device.create_stream();
    resource->set_release_threshold(0);
    { Buffer buffer = resource->allocate(64 * MiB, stream); }
    stream.sync();
    resource->trim_to(0);
    EXPECT_LE(resource->reserved_memory(), resource->used_memory() + 32 * MiB);
    resource->set_release_threshold(original);
}

TEST(MemoryGpu, AllocationWorksWithoutACurrentContext) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Stream legacy = device.default_stream();
    std::string failure;
    std::thread worker([&] {
        try {
            CUcontext current = nullptr;
            detail::driver().cuCtxGetCurrent(&current);
            if (current) failure = "a new thread should have no current context";
            for (const Stream* s : {&stream, &legacy}) {
                Buffer buffer = device.allocate(4096, *s);
                buffer.fill_uint32(0x01020304u, *s);
                std::vector<std::uint32_t> words(1024);
                buffer.copy_to(words, *s);
                device.sync();  // the legacy stream's own sync needs a current context
                for (auto w : words)
                    if (w != 0x01020304u) failure = "wrong fill seen from a thread without context";
                buffer.close(*s);
            }
            detail::driver().cuCtxGetCurrent(&current);
            if (current) failure = "cudacore left a context current on the thread";
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    worker.join();
    EXPECT_EQ(failure, "");
}

TEST(MemoryGpu, FillBytesAndWords) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    const std::size_t size = MiB + 3;
    Buffer bytes = device.allocate(size, stream);
    bytes.fill_byte(0xab, stream);
    std::vector<std::uint8_t> host(size);
    bytes.copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(std::count(host.begin(), host.end(), 0xab), static_cast<std::ptrdiff_t>(size));

    Buffer words = device.allocate(4 * 4096, stream);
    words.fill_uint32(0xdeadbeefu, stream);
    std::vector<std::uint32_t> host_words(4096);
    words.copy_to(host_words, stream);
    stream.sync();
    EXPECT_EQ(std::count(host_words.begin(), host_words.end(), 0xdeadbeefu), 4096);

    // Pinned memory is filled by the device too and read through the span view.
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer host_visible = pinned->allocate(256, stream);
    host_visible.fill_uint32(0x11223344u, stream);
    stream.sync();
    for (std::uint32_t w : host_visible.span<std::uint32_t>()) ASSERT_EQ(w, 0x11223344u);
}

TEST(MemoryGpu, ManagedMemoryWrittenOnDeviceReadOnHostAfterPrefetch) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    if (!device.attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS))
        GTEST_SKIP() << "device cannot prefetch managed memory";
    Stream stream = device.create_stream();
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    const std::size_t size = 64 * MiB;  // small: never more than the card has free
    Buffer buffer = managed->allocate(size, stream);
    EXPECT_TRUE(buffer.is_host_accessible());
    EXPECT_TRUE(buffer.is_device_accessible());
    auto words = buffer.span<std::uint32_t>();
    std::fill(words.begin(), words.end(), 1u);  // first touched on the host
    prefetch(buffer, MemoryLocation::device(device.ordinal()), stream);
    buffer.fill_uint32(0xc0ffee00u, stream);  // written on the device
    prefetch(buffer, MemoryLocation::host(), stream);
    stream.sync();
    EXPECT_EQ(std::count(words.begin(), words.end(), 0xc0ffee00u),
              static_cast<std::ptrdiff_t>(words.size()));
    buffer.close(stream);
}

TEST(MemoryGpu, WrapUnownedWrapsWithoutFreeingAndAsksTheDriverWhatItIs) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    Buffer owner = resource->allocate(4096, stream);
    owner.fill_byte(5, stream);
    {
        Buffer wrapped = Buffer::wrap_unowned(owner.handle(), owner.size());
        EXPECT_FALSE(wrapped.owns_memory());
        EXPECT_TRUE(wrapped.is_device_accessible());
        EXPECT_FALSE(wrapped.is_host_accessible());
        EXPECT_EQ(wrapped.device_ordinal(), 0);
        EXPECT_EQ(wrapped.memory_resource(), nullptr);
        wrapped.close(stream);  // marks closed, frees nothing
    }
    std::vector<std::uint8_t> host(4096);
    owner.copy_to(host, stream);  // still valid
    stream.sync();
    EXPECT_EQ(std::count(host.begin(), host.end(), 5), 4096);

    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned_owner = pinned->allocate(64, stream);
    Buffer pinned_view = Buffer::wrap_unowned(pinned_owner.data(), 64);
    EXPECT_TRUE(pinned_view.is_host_accessible());
    EXPECT_TRUE(pinned_view.is_device_accessible());
    EXPECT_EQ(pinned_view.device_ordinal(), -1);

    Buffer with_resource = Buffer::wrap_unowned(owner.handle(), 4096, resource);
    EXPECT_EQ(with_resource.memory_resource(), resource);
    EXPECT_FALSE(with_resource.owns_memory());
}

// Plain host memory CUDA does not know (a static array, malloc'ed memory) wraps as cuda.core
// wraps it: host accessible, on no device, not owned; copies to and from it are pageable copies.
std::uint32_t static_words[1024];

TEST(MemoryGpu, WrapUnownedOfPlainHostMemoryIsHostMemoryOfNoDevice) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    auto expect_plain_host = [](const Buffer& view, const void* pointer) {
        EXPECT_FALSE(view.owns_memory());
        EXPECT_TRUE(view.is_host_accessible());
        EXPECT_EQ(view.device_ordinal(), -1);
        EXPECT_THROW(view.device(), InvalidArgumentError);
        EXPECT_EQ(view.memory_resource(), nullptr);
        // The driver does not know it (memory type 0), so it is not device accessible.
        unsigned memory_type = 99;
        CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
        void* value = &memory_type;
        detail::check(detail::driver().cuPointerGetAttributes(
                          1, &attribute, &value, reinterpret_cast<CUdeviceptr>(pointer)),
                      "cuPointerGetAttributes");
        EXPECT_EQ(memory_type, 0u);
        EXPECT_FALSE(view.is_device_accessible());
    };
    Buffer wrapped_static = Buffer::wrap_unowned(static_words, sizeof static_words);
    expect_plain_host(wrapped_static, static_words);
    EXPECT_NE(wrapped_static.description().find("on no device"), std::string::npos)
        << wrapped_static.description();

    // A device buffer copied into the static array through the wrapper, and back.
    Buffer on_device = device.allocate(sizeof static_words, stream);
    on_device.fill_uint32(0x5eed1234u, stream);
    on_device.copy_to(wrapped_static, stream);
    stream.sync();
    EXPECT_EQ(std::count(std::begin(static_words), std::end(static_words), 0x5eed1234u), 1024);
    for (auto& word : wrapped_static.span<std::uint32_t>()) word = 77;  // host accessible
    on_device.copy_from(wrapped_static, stream);
    std::vector<std::uint32_t> back(1024);
    on_device.copy_to(back, stream);
    stream.sync();
    EXPECT_EQ(std::count(back.begin(), back.end(), 77u), 1024);

    // malloc'ed memory, with free as its deleter (from_handle without a resource).
    void* heap = std::malloc(4096);
    ASSERT_NE(heap, nullptr);
    bool freed = false;
    {
        auto free_it = [&](CUdeviceptr pointer, std::size_t) {
            std::free(reinterpret_cast<void*>(pointer));
            freed = true;
        };
        Buffer owned = Buffer::from_handle(heap, 4096, nullptr, free_it);
        EXPECT_TRUE(owned.owns_memory());
        EXPECT_TRUE(owned.is_host_accessible());
        EXPECT_EQ(owned.device_ordinal(), -1);
        Buffer view = Buffer::wrap_unowned(heap, 4096);
        expect_plain_host(view, heap);
        on_device.copy_to(view, stream);
        stream.sync();
        EXPECT_EQ(static_cast<std::uint32_t*>(heap)[1023], 77u);
    }
    EXPECT_TRUE(freed);
    on_device.close(stream);
}

// As in cuda.core, from_handle(ptr, size, resource) hands the memory to the resource, which frees
// it when the last copy goes; owners and deleters run at the same moment.
TEST(MemoryGpu, FromHandleHandsTheMemoryToItsResource) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    stream.sync();
    const std::uint64_t used_before = resource->used_memory();
    CUdeviceptr raw = 0;
    detail::check(detail::driver().cuMemAllocFromPoolAsync(&raw, 2 * MiB, resource->pool(),
                                                           stream.handle()),
                  "cuMemAllocFromPoolAsync");
    stream.sync();
    EXPECT_GE(resource->used_memory(), used_before + 2 * MiB);
    {
        Buffer handed = Buffer::from_handle(raw, 2 * MiB, resource);
        EXPECT_TRUE(handed.owns_memory());
        EXPECT_EQ(handed.memory_resource(), resource);
        EXPECT_EQ(handed.device_ordinal(), 0);
        Buffer copy = handed;
        handed.fill_byte(3, stream);
        stream.sync();
    }
    device.sync();  // the free is ordered on the default stream
    EXPECT_EQ(resource->used_memory(), used_before) << "freed by its resource";

    // A deleter: called once, with the pointer and size.
    int calls = 0;
    Buffer source = device.allocate(4096, stream);
    {
        Buffer with_deleter =
            Buffer::from_handle(source.handle(), 4096, resource,
                                [&](CUdeviceptr pointer, std::size_t size) {
                                    ++calls;
                                    EXPECT_EQ(pointer, source.handle());
                                    EXPECT_EQ(size, 4096u);
                                });
        EXPECT_EQ(calls, 0);
    }
    EXPECT_EQ(calls, 1);
    // An owner: the memory stays valid while the buffer holds it.
    auto holder = std::make_shared<Buffer>(device.allocate(4096, stream));
    std::weak_ptr<Buffer> watch = holder;
    Buffer held = Buffer::from_handle(holder->handle(), 4096, nullptr, holder);
    holder.reset();
    EXPECT_EQ(held.device_ordinal(), 0);  // asked of the driver
    held.fill_byte(1, stream);
    stream.sync();
    EXPECT_FALSE(watch.expired());
    held.close(stream);
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(held.memory_resource(), nullptr);
}

// As in cuda.core, allocate(0) gives an empty buffer of that resource, on Device and every
// resource.
TEST(MemoryGpu, AllocateZeroGivesAnEmptyBufferOfEveryResource) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    std::vector<std::shared_ptr<MemoryResource>> resources = {
        device.memory_resource(), std::make_shared<DeviceMemoryResource>(device),
        std::make_shared<LegacyPinnedMemoryResource>(device),
        std::make_shared<ManagedMemoryResource>(device)};
    Buffer from_device = device.allocate(0, stream);
    EXPECT_FALSE(from_device.is_closed());
    EXPECT_EQ(from_device.size(), 0u);
    EXPECT_EQ(from_device.memory_resource(), device.memory_resource());
    for (const auto& resource : resources) {
        Buffer empty = resource->allocate(0, stream);
        EXPECT_FALSE(empty.is_closed()) << resource->description();
        EXPECT_EQ(empty.size(), 0u);
        EXPECT_EQ(empty.handle(), 0u);
        EXPECT_EQ(empty.memory_resource(), resource) << resource->description();
        EXPECT_EQ(empty.device_ordinal(), resource->device_ordinal());
        Buffer other = resource->allocate(0, stream);
        empty.copy_from(other, stream);  // nothing to copy
        empty.fill_byte(0, stream);
        empty.close(stream);
        EXPECT_TRUE(empty.is_closed());
        EXPECT_EQ(empty.memory_resource(), nullptr) << "a closed buffer reports no resource";
    }
    stream.sync();
}

TEST(MemoryGpu, ErrorCasesAreClearErrors) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Stream stream = device.create_stream();
    Buffer small = device.allocate(100, stream);
    Buffer large = device.allocate(200, stream);
    std::vector<std::uint8_t> host(100);

    auto message = invalid_argument_message([&] { large.copy_from(small, stream); });
    EXPECT_CONTAINS(message, "sizes differ");
    EXPECT_CONTAINS(message, "100 bytes");
    EXPECT_CONTAINS(message, "200 bytes");
    message = invalid_argument_message([&] { large.copy_from(host, stream); });
    EXPECT_CONTAINS(message, "200 bytes");
    message = invalid_argument_message(
        [&] { small.copy_from(static_cast<const void*>(nullptr), 100, stream); });
    EXPECT_CONTAINS(message, "null host pointer");
    message = invalid_argument_message([&] { small.bytes(); });
    EXPECT_CONTAINS(message, "not host accessible");
    message = invalid_argument_message([&] { Buffer::wrap_unowned(CUdeviceptr{0}, 8); });
    EXPECT_CONTAINS(message, "null pointer");

    small.close(stream);
    message = invalid_argument_message([&] { small.copy_to(host, stream); });
    EXPECT_CONTAINS(message, "closed");
    EXPECT_CONTAINS(message, "100 bytes");
    message = invalid_argument_message([&] { small.fill_byte(1, stream); });
    EXPECT_CONTAINS(message, "closed");
    message = invalid_argument_message([&] { prefetch(small, MemoryLocation::host(), stream); });
    EXPECT_CONTAINS(message, "closed");

    DeviceMemoryResource on_stack(device);
    message = invalid_argument_message([&] { on_stack.allocate(8, stream); });
    EXPECT_CONTAINS(message, "std::shared_ptr");

    // More than any card has: the driver's error, naming the size and the pool.
    try {
        device.allocate(std::size_t{1} << 50, stream);
        ADD_FAILURE() << "a 1 PiB allocation succeeded";
    } catch (const DriverError& e) {
        EXPECT_TRUE(e.status() == CUDA_ERROR_OUT_OF_MEMORY || e.status() == CUDA_ERROR_INVALID_VALUE)
            << e.what();
        EXPECT_EQ(e.call(), "cuMemAllocFromPoolAsync");
        EXPECT_CONTAINS(e.what(), std::to_string(std::size_t{1} << 50));
        EXPECT_CONTAINS(e.what(), "memory pool of device 0");
    }
    // Prefetching memory that is not managed says so, naming the buffer.
    message = invalid_argument_message([&] { prefetch(large, MemoryLocation::host(), stream); });
    EXPECT_CONTAINS(message, "not a managed-memory allocation");
    EXPECT_CONTAINS(message, "200 bytes");
    EXPECT_CONTAINS(message, "memory pool of device 0");
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer pinned_buffer = pinned->allocate(64, stream);
    message = invalid_argument_message([&] { prefetch(pinned_buffer, MemoryLocation::device(device.ordinal()), stream); });
    EXPECT_CONTAINS(message, "not a managed-memory allocation");
    EXPECT_CONTAINS(message, "pinned host memory");
    // Wrapped device memory: the driver is asked, and says it is not managed.
    Buffer view = Buffer::wrap_unowned(large.handle(), large.size());
    message = invalid_argument_message([&] { prefetch(view, MemoryLocation::host(), stream); });
    EXPECT_CONTAINS(message, "not a managed-memory allocation");
    stream.sync();
}

// One memory_lifetime scenario in a child process: exit code 0, nothing on stderr.
test::ProcessResult run_lifetime_scenario(const char* scenario) {
    auto result = test::run_process({test::helper_path("memory_lifetime").string(), scenario});
    EXPECT_EQ(result.exit_code, 0) << scenario << "\n" << result.out << result.err;
    EXPECT_EQ(result.err, "") << scenario;
    EXPECT_NE(result.out.find(std::string("scenario ") + scenario + " done"), std::string::npos)
        << result.out;
    return result;
}

TEST(MemoryGpu, DestructionAtExitAndInAnyOrderIsSilent) {
    CUDACORE_REQUIRE_GPU();
    for (const char* scenario : {"static", "random", "exit"}) {
        const auto result = run_lifetime_scenario(scenario);
        // Buffers still alive at exit (statics, std::exit) are freed before the driver's
        // teardown: every free the counting resource saw succeeded.
        int freed = -1, allocated = -2;
        const auto at = result.out.find("freed while the driver was usable: ");
        ASSERT_NE(at, std::string::npos) << scenario << "\n" << result.out;
        ASSERT_EQ(std::sscanf(result.out.c_str() + at, "freed while the driver was usable: %d of %d",
                              &freed, &allocated),
                  2);
        EXPECT_GT(allocated, 0) << scenario;
        EXPECT_EQ(freed, allocated) << scenario << "\n" << result.out;
    }
}

// Apart: the reset destroys the context under live buffers, so the driver calls that find it gone
// fail on purpose (listed in tests/sanitize_expected_errors.txt).
TEST(MemoryGpu, DestructionAfterSomeoneResetTheDeviceIsSilent) {
    CUDACORE_REQUIRE_GPU();
    run_lifetime_scenario("reset");
}

}  // namespace
