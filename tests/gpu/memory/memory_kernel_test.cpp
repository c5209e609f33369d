// Buffers meeting kernels: pinned copies overlapped with a running kernel (asserted with
// events), managed memory written by a kernel and read on the host after prefetch, and Buffers
// as launch() arguments.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/managed_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "cudacore/program.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;

constexpr const char* kernels = R"(
extern "C" __global__ void spin(unsigned long long nanoseconds) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}

extern "C" __global__ void write_pattern(unsigned* out, unsigned long long count) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < count) out[i] = (unsigned)(i * 3u + 1u);
}
)";

ObjectCode compile_kernels(const Device& device) {
    ProgramOptions options;
    options.name = "memory_kernel_test";
    options.arch = device.arch();
    return Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
}

TEST(MemoryKernelGpu, PinnedCopyOverlapsWithAKernelOnAnotherStream) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ObjectCode code = compile_kernels(device);
    Kernel spin = code.get_kernel("spin");
    Stream compute = device.create_stream();
    Stream copy = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    const std::size_t size = 256 * MiB;
    Buffer host = pinned->allocate(size, copy);
    Buffer target = device.allocate(size, copy);
    auto words = host.span<std::uint32_t>();
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 7);
    copy.sync();

    const EventOptions timing{.timing_enabled = true};
    // Every event is timed from `origin`, recorded before both streams start.
    Event origin = compute.record(timing);
    copy.wait(origin);
    Event kernel_start = compute.record(timing);
    launch(compute, LaunchConfig{}, spin, 200'000'000ull);  // 200 ms on one block
    Event kernel_end = compute.record(timing);
    Event copy_start = copy.record(timing);
    target.copy_from(host, copy);
    Event copy_end = copy.record(timing);
    copy.sync();
    const bool kernel_still_running = !compute.is_done();
    compute.sync();

    const double ks = (kernel_start - origin).count(), ke = (kernel_end - origin).count();
    const double cs = (copy_start - origin).count(), ce = (copy_end - origin).count();
    const double overlap = std::min(ke, ce) - std::max(ks, cs);
    const double copy_time = ce - cs;
    EXPECT_TRUE(kernel_still_running) << "the copy finished only after the kernel";
    EXPECT_GT(copy_time, 0.0);
    EXPECT_GE(overlap, 0.9 * copy_time)
        << "kernel [" << ks << ", " << ke << "] ms, copy [" << cs << ", " << ce << "] ms";
    std::printf("kernel %.2f ms, pinned copy of %zu MiB %.2f ms (%.1f GB/s), overlap %.2f ms\n",
                ke - ks, size / MiB, copy_time, size / copy_time / 1e6, overlap);

    // And the data arrived.
    std::vector<std::uint32_t> back(words.size());
    target.copy_to(back, copy);
    copy.sync();
    EXPECT_TRUE(std::equal(back.begin(), back.end(), words.begin()));
}

TEST(MemoryKernelGpu, ManagedMemoryWrittenByAKernelIsReadOnTheHostAfterPrefetch) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ObjectCode code = compile_kernels(device);
    Kernel write_pattern = code.get_kernel("write_pattern");
    Stream stream = device.create_stream();
    auto managed = std::make_shared<ManagedMemoryResource>(device);
    const std::size_t size = 64 * MiB;  // small: never more than the card has free
    const unsigned long long count = size / sizeof(unsigned);
    Buffer buffer = managed->allocate(size, stream);
    auto words = buffer.span<std::uint32_t>();
    std::fill(words.begin(), words.end(), 0u);

    const bool can_prefetch = device.attribute(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
    if (can_prefetch) prefetch(buffer, MemoryLocation::device(device.ordinal()), stream);
    const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
    launch(stream, LaunchConfig{.grid = blocks, .block = 256}, write_pattern, buffer, count);
    if (can_prefetch) prefetch(buffer, MemoryLocation::host(), stream);
    stream.sync();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < words.size(); ++i)
        wrong += words[i] != static_cast<std::uint32_t>(i * 3u + 1u);
    EXPECT_EQ(wrong, 0u);
}

TEST(MemoryKernelGpu, BuffersAreKernelArgumentsAndClosedOnesAreRefused) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    ObjectCode code = compile_kernels(device);
    Kernel write_pattern = code.get_kernel("write_pattern");
    Stream stream = device.create_stream();
    Buffer buffer = device.allocate(4096, stream);
    launch(stream, LaunchConfig{.grid = 4, .block = 256}, write_pattern, buffer, 1024ull);
    std::vector<std::uint32_t> host(1024);
    buffer.copy_to(host, stream);
    stream.sync();
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(host[i], i * 3u + 1u) << i;

    buffer.close(stream);
    EXPECT_THROW(launch(stream, LaunchConfig{.grid = 4, .block = 256}, write_pattern, buffer,
                        1024ull),
                 InvalidArgumentError);
    EXPECT_THROW(launch(stream, LaunchConfig{}, write_pattern, Buffer(), 1ull),
                 InvalidArgumentError);
}

}  // namespace
