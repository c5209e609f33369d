// CachingMemoryResource under load on a GPU: 16 threads on 16 streams allocate random sizes
// (256 B to 64 MiB), kernels write a tag of their own into every word of each block, wait a
// little, and check it; half the blocks are handed to another thread, whose stream waits for
// the first (an event) and checks the block again before freeing it there. A block handed out
// twice while in use shows as words with another block's tag. Meant to run under
// compute-sanitizer too (no out-of-bounds access, no use of freed memory).
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/caching_memory_resource.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kernels = R"(
extern "C" __global__ void fill(unsigned* words, unsigned long long count, unsigned tag) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += (unsigned long long)gridDim.x * blockDim.x)
        words[i] = tag;
}

// Waits `nanoseconds` (so that the block stays in use a while), then counts the words that lost
// their tag.
extern "C" __global__ void check(const unsigned* words, unsigned long long count, unsigned tag,
                                 unsigned long long nanoseconds, unsigned* wrong) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
    unsigned found = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         i < count; i += (unsigned long long)gridDim.x * blockDim.x)
        found += words[i] != tag;
    if (found) atomicAdd(wrong, found);
}
)";

struct Handed {
    Buffer buffer;
    unsigned tag;
    Event written;  // recorded on the allocating stream after its check
};

struct Stress {
    int threads = 16;
    int rounds = 200;
};

// Rounds per thread: CUDACORE_STRESS_ROUNDS, for shorter runs under compute-sanitizer.
int rounds_from_environment(int fallback) {
    const char* text = std::getenv("CUDACORE_STRESS_ROUNDS");
    return text && std::atoi(text) > 0 ? std::atoi(text) : fallback;
}

void run_stress(const std::shared_ptr<CachingMemoryResource>& caching, Stress stress) {
    Device device(0);
    ProgramOptions options;
    options.name = "caching_memory_stress";
    options.arch = device.arch();
    const ObjectCode code = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
    const Kernel fill = code.get_kernel("fill");
    const Kernel check = code.get_kernel("check");
    std::vector<Stream> streams;
    for (int t = 0; t < stress.threads; ++t) streams.push_back(device.create_stream());
    // One counter of wrong words per thread, from the device's pool (not the cache under test).
    Buffer wrong = device.allocate(sizeof(unsigned) * stress.threads, streams[0]);
    wrong.fill_byte(0, streams[0]);
    streams[0].sync();
    const auto counter = [&](int t) { return wrong.handle() + sizeof(unsigned) * t; };

    std::mutex mailbox_mutex;
    std::vector<std::vector<Handed>> mailbox(stress.threads);
    std::atomic<unsigned> next_tag{1};
    std::atomic<int> failures{0};
    const LaunchConfig config{.grid = 64, .block = 256};

    auto check_on = [&](const Stream& stream, const Buffer& buffer, unsigned tag, int t,
                        unsigned long long wait_ns) {
        auto* out = reinterpret_cast<unsigned*>(counter(t));
        launch(stream, config, check, buffer, static_cast<unsigned long long>(buffer.size() / 4),
               tag, wait_ns, out);
    };

    std::vector<std::thread> workers;
    for (int t = 0; t < stress.threads; ++t) {
        workers.emplace_back([&, t] {
            try {
                device.set_current();
                std::mt19937_64 random(0x5eed + static_cast<unsigned>(t));
                const Stream& own = streams[static_cast<std::size_t>(t)];
                std::vector<Handed> held;
                std::uniform_real_distribution<double> log_size(std::log2(256.0), 26.0);
                for (int round = 0; round < stress.rounds; ++round) {
                    // 256 B to 64 MiB, spread evenly over the powers of two; multiples of 4.
                    std::size_t size =
                        static_cast<std::size_t>(std::exp2(log_size(random))) & ~std::size_t{3};
                    size = std::max<std::size_t>(size, 256);
                    Buffer buffer = caching->allocate(size, own);
                    const unsigned tag = next_tag.fetch_add(1);
                    launch(own, config, fill, buffer, static_cast<unsigned long long>(size / 4),
                           tag);
                    check_on(own, buffer, tag, t, 2000 + random() % 20000);
                    held.push_back({std::move(buffer), tag, own.record()});
                    while (held.size() > 6 || (!held.empty() && random() % 3 == 0)) {
                        const std::size_t pick = random() % held.size();
                        Handed block = std::move(held[pick]);
                        held.erase(held.begin() + static_cast<std::ptrdiff_t>(pick));
                        switch (random() % 4) {
                            case 0: {  // to another thread, which frees it on its own stream
                                const int to = static_cast<int>(
                                    (t + 1 + random() % (stress.threads - 1)) % stress.threads);
                                std::lock_guard lock(mailbox_mutex);
                                mailbox[static_cast<std::size_t>(to)].push_back(std::move(block));
                                break;
                            }
                            case 1:  // freed on another stream, after it waited for this one
                            {
                                const Stream& other =
                                    streams[static_cast<std::size_t>((t + 1) % stress.threads)];
                                other.wait(block.written);
                                check_on(other, block.buffer, block.tag, t, 0);
                                block.buffer.close(other);
                                break;
                            }
                            case 2:
                                block.buffer.close(own);
                                break;
                            default:
                                break;  // dropped: freed on its stream by the destructor
                        }
                    }
                    std::vector<Handed> received;
                    {
                        std::lock_guard lock(mailbox_mutex);
                        received.swap(mailbox[static_cast<std::size_t>(t)]);
                    }
                    for (Handed& block : received) {
                        own.wait(block.written);
                        check_on(own, block.buffer, block.tag, t, 1000);
                        block.buffer.close(own);
                    }
                }
                for (Handed& block : held) block.buffer.close(own);
            } catch (const std::exception& e) {
                ++failures;
                ADD_FAILURE() << "thread " << t << ": " << e.what();
            }
        });
    }
    for (auto& worker : workers) worker.join();
    for (auto& box : mailbox)
        for (Handed& block : box) block.buffer.close(streams[0]);
    mailbox.clear();
    for (const Stream& stream : streams) stream.sync();
    ASSERT_EQ(failures, 0);
    std::vector<unsigned> counts(static_cast<std::size_t>(stress.threads));
    wrong.copy_to(counts, streams[0]);
    streams[0].sync();
    for (int t = 0; t < stress.threads; ++t)
        EXPECT_EQ(counts[static_cast<std::size_t>(t)], 0u)
            << "thread " << t << " found words of another block: a block was handed out twice";
    const CachingMemoryStatistics stats = caching->statistics();
    EXPECT_EQ(stats.bytes_in_use, 0u);
    EXPECT_GT(stats.hits, 0u);
    EXPECT_EQ(stats.hits + stats.misses, std::uint64_t(stress.threads) * stress.rounds);
    EXPECT_EQ(stats.bytes_reserved, stats.bytes_cached);
    caching->release();
    EXPECT_EQ(caching->statistics().bytes_reserved, 0u);
}

TEST(CachingMemoryGpu, SixteenThreadsNeverShareABlockInUse) {
    CUDACORE_REQUIRE_GPU();
    auto caching = CachingMemoryResource::create(Device(0));
    run_stress(caching, {.threads = 16, .rounds = rounds_from_environment(200)});
}

// Every free goes to the shared arena with an event, and the bound is small: reuse across
// streams through events, and frees straight to the pool, on every round.
TEST(CachingMemoryGpu, SixteenThreadsThroughTheSharedArenaOnly) {
    CUDACORE_REQUIRE_GPU();
    auto caching = CachingMemoryResource::create(
        Device(0), {.max_thread_cached_bytes = 0, .max_cached_bytes = std::size_t{256} << 20});
    run_stress(caching, {.threads = 16, .rounds = rounds_from_environment(200)});
}

// The cache's blocks are device memory of the pool: a kernel's writes come back through copies,
// and a freed block reused on the same stream holds what the stream last wrote.
TEST(CachingMemoryGpu, BuffersAreDeviceMemoryAndComeBackOnTheirStream) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    auto caching = CachingMemoryResource::create(device);
    EXPECT_TRUE(caching->is_device_accessible());
    EXPECT_FALSE(caching->is_host_accessible());
    EXPECT_EQ(caching->device_ordinal(), 0);
    Stream stream = device.create_stream();
    Buffer first = caching->allocate(1 << 20, stream);
    const CUdeviceptr address = first.handle();
    first.fill_uint32(0xabcd1234u, stream);
    first.close(stream);
    Buffer second = caching->allocate((1 << 20) - 100, stream);
    EXPECT_EQ(second.handle(), address);  // same class, same stream: the same block
    std::vector<std::uint32_t> host(4);
    Buffer head = Buffer::wrap_unowned(second.handle(), 16);
    head.copy_to(host, stream);
    stream.sync();
    EXPECT_EQ(host[0], 0xabcd1234u);
    EXPECT_EQ(caching->statistics().hits, 1u);
}

}  // namespace
