// CachingMemoryResource's own logic without a GPU: over host memory (a test resource), with
// stand-in streams (distinct handles no driver sees) and stand-in events whose completion the
// test decides. Size classes, reuse in stream order, the bounds, release, out-of-memory, thread
// exit, statistics, and many threads handing blocks to each other (each block's bytes checked).
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/caching_memory_resource.hpp"
#include "cudacore/errors.hpp"
#include "memory/caching_stream_ops.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using test::HostMemoryResource;

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

CUstream stream_handle(std::uintptr_t n) {
    return reinterpret_cast<CUstream>(0x1000 * n);
}

// Events are numbers; the test marks them done (or everything, at synchronize).
class FakeStreamOps final : public detail::CachingStreamOps {
public:
    CUevent record(CUstream stream) override {
        std::lock_guard lock(mutex_);
        auto event = reinterpret_cast<CUevent>(++next_);
        recorded_on[event] = stream;
        ++records;
        return event;
    }
    bool done(CUevent event) override {
        std::lock_guard lock(mutex_);
        ++queries;
        return all_done_ || done_.count(event) > 0;
    }
    void recycle(CUevent) noexcept override { ++recycled; }
    void synchronize() override {
        if (fail_synchronize)
            throw DriverError(CUDA_ERROR_LAUNCH_FAILED, "cuCtxSynchronize", "test");
        ++synchronizations;
    }
    void mark_done(CUevent event) {
        std::lock_guard lock(mutex_);
        done_.insert(event);
    }
    void mark_all_done() {
        std::lock_guard lock(mutex_);
        all_done_ = true;
    }
    CUevent last_event() {
        std::lock_guard lock(mutex_);
        return reinterpret_cast<CUevent>(next_);
    }

    std::map<CUevent, CUstream> recorded_on;
    std::atomic<int> records{0}, queries{0}, recycled{0}, synchronizations{0};
    bool fail_synchronize = false;

private:
    std::mutex mutex_;
    std::uintptr_t next_ = 0;
    std::set<CUevent> done_;
    bool all_done_ = false;
};

// Host memory that runs out after `capacity` bytes held at once, as a device pool does.
class LimitedResource final : public MemoryResource {
public:
    explicit LimitedResource(std::size_t capacity) : capacity_(capacity) {}
    bool is_device_accessible() const noexcept override { return false; }
    bool is_host_accessible() const noexcept override { return true; }
    int device_ordinal() const noexcept override { return 0; }
    std::string description() const override { return "limited test memory"; }
    std::atomic<std::size_t> held{0};
    std::atomic<int> refusals{0};

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream) override {
        if (held + size > capacity_) {
            ++refusals;
            throw DriverError(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocFromPoolAsync",
                              std::to_string(size) + " bytes from limited test memory");
        }
        held += size;
        return reinterpret_cast<CUdeviceptr>(::operator new(size));
    }
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream) override {
        held -= size;
        ::operator delete(reinterpret_cast<void*>(pointer));
    }

private:
    std::size_t capacity_;
};

struct Fixture : ::testing::Test {
    std::shared_ptr<HostMemoryResource> upstream = std::make_shared<HostMemoryResource>();
    std::shared_ptr<FakeStreamOps> ops = std::make_shared<FakeStreamOps>();
    std::shared_ptr<CachingMemoryResource> make(CachingMemoryResourceOptions options = {}) {
        const detail::ScopedCachingStreamOps scope(ops);
        return std::make_shared<CachingMemoryResource>(upstream, options);
    }
};

using CachingMemory = Fixture;

TEST_F(CachingMemory, RoundsToSizeClassesOfAtMostAQuarterMore) {
    auto caching = make();
    EXPECT_EQ(caching->block_size(1), 256u);
    EXPECT_EQ(caching->block_size(256), 256u);
    EXPECT_EQ(caching->block_size(257), 512u);
    EXPECT_EQ(caching->block_size(1000), 1024u);
    EXPECT_EQ(caching->block_size(1025), 1280u);
    EXPECT_EQ(caching->block_size(MiB), MiB);
    EXPECT_EQ(caching->block_size(MiB + 1), MiB + MiB / 4);
    EXPECT_EQ(caching->block_size(3 * MiB), 3 * MiB);
    EXPECT_EQ(caching->block_size(64 * MiB), 64 * MiB);
    EXPECT_EQ(caching->block_size(64 * MiB + 1), 64 * MiB + 1);  // beyond max_block_size: as is
    for (std::size_t size = 1; size < 8 * MiB; size = size * 5 / 4 + 7) {
        const std::size_t block = caching->block_size(size);
        EXPECT_GE(block, size);
        // Multiples of 256 bytes up to 1 KiB, then at most a quarter more.
        EXPECT_LE(block, size <= 1024 ? size + 255 : size + size / 4) << size;
    }
}

TEST_F(CachingMemory, ASizeClassIsReusedForAnySizeInIt) {
    auto caching = make();
    const CUstream s = stream_handle(1);
    const CUdeviceptr first = caching->allocate_pointer(1000, s);
    caching->deallocate_pointer(first, 1000, s);
    EXPECT_EQ(caching->allocate_pointer(900, s), first);
    EXPECT_EQ(upstream->allocations, 1);
    const auto stats = caching->statistics();
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.bytes_in_use, 1024u);
    caching->deallocate_pointer(first, 900, s);
}

TEST_F(CachingMemory, ABlockGoesBackToItsOwnStreamAtOnceWithoutAnEvent) {
    auto caching = make();
    const CUstream s = stream_handle(1);
    const CUdeviceptr p = caching->allocate_pointer(MiB, s);
    caching->deallocate_pointer(p, MiB, s);
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(caching->allocate_pointer(MiB, s), p);
        caching->deallocate_pointer(p, MiB, s);
    }
    EXPECT_EQ(upstream->allocations, 1);
    EXPECT_EQ(upstream->frees, 0);
    EXPECT_EQ(ops->records, 0);  // the hot path asks the driver nothing
    EXPECT_EQ(ops->queries, 0);
    const auto stats = caching->statistics();
    EXPECT_EQ(stats.hits, 100u);
    EXPECT_EQ(stats.bytes_cached, MiB);
    EXPECT_EQ(stats.bytes_in_use, 0u);
    EXPECT_EQ(stats.bytes_reserved, MiB);
}

TEST_F(CachingMemory, AnotherStreamDoesNotGetABlockOfAThreadArena) {
    auto caching = make();
    const CUdeviceptr p = caching->allocate_pointer(MiB, stream_handle(1));
    caching->deallocate_pointer(p, MiB, stream_handle(1));
    const CUdeviceptr q = caching->allocate_pointer(MiB, stream_handle(2));
    EXPECT_NE(q, p);
    EXPECT_EQ(upstream->allocations, 2);
    caching->deallocate_pointer(q, MiB, stream_handle(2));
}

TEST_F(CachingMemory, AnotherStreamGetsASharedBlockOnlyOnceItsEventIsDone) {
    auto caching = make({.max_thread_cached_bytes = 0});  // every free goes to the shared arena
    const CUstream s1 = stream_handle(1), s2 = stream_handle(2);
    const CUdeviceptr p = caching->allocate_pointer(MiB, s1);
    caching->deallocate_pointer(p, MiB, s1);
    ASSERT_EQ(ops->records, 1);
    const CUevent event = ops->last_event();
    EXPECT_EQ(ops->recorded_on[event], s1);  // recorded on the freeing stream, at the free
    const CUdeviceptr q = caching->allocate_pointer(MiB, s2);
    EXPECT_NE(q, p);  // the work on s1 may still use p
    EXPECT_GE(ops->queries, 1);
    caching->deallocate_pointer(q, MiB, s2);
    ops->mark_done(event);
    EXPECT_EQ(caching->allocate_pointer(MiB, s2), p);  // oldest first, and now done
    EXPECT_GE(ops->recycled, 1);
    caching->deallocate_pointer(p, MiB, s2);
}

TEST_F(CachingMemory, ItsOwnStreamGetsASharedBlockBeforeItsEventIsDone) {
    auto caching = make({.max_thread_cached_bytes = 0});
    const CUstream s1 = stream_handle(1);
    const CUdeviceptr p = caching->allocate_pointer(4 * KiB, s1);
    caching->deallocate_pointer(p, 4 * KiB, s1);
    EXPECT_EQ(caching->allocate_pointer(4 * KiB, s1), p);
    EXPECT_EQ(ops->recycled, 1);
    caching->deallocate_pointer(p, 4 * KiB, s1);
}

TEST_F(CachingMemory, ThePerThreadStreamOfAnotherThreadIsAnotherStream) {
    auto caching = make({.max_thread_cached_bytes = 0});
    const CUdeviceptr p = caching->allocate_pointer(MiB, CU_STREAM_PER_THREAD);
    caching->deallocate_pointer(p, MiB, CU_STREAM_PER_THREAD);
    CUdeviceptr q = 0;
    std::thread([&] { q = caching->allocate_pointer(MiB, CU_STREAM_PER_THREAD); }).join();
    EXPECT_NE(q, p);
    caching->deallocate_pointer(q, MiB, CU_STREAM_PER_THREAD);
}

TEST_F(CachingMemory, CachedBytesStayWithinTheBounds) {
    auto caching = make({.max_thread_cached_bytes = 2 * KiB, .max_cached_bytes = 2 * KiB});
    const CUstream s = stream_handle(1);
    std::vector<CUdeviceptr> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(caching->allocate_pointer(KiB, s));
    for (CUdeviceptr p : blocks) caching->deallocate_pointer(p, KiB, s);
    const auto stats = caching->statistics();
    EXPECT_EQ(stats.bytes_cached, 4 * KiB);  // 2 KiB in this thread's arena, 2 KiB shared
    EXPECT_EQ(stats.upstream_frees, 4u);
    EXPECT_EQ(upstream->frees, 4);
    EXPECT_EQ(ops->records, 2);  // only the blocks the shared arena kept
    EXPECT_EQ(stats.bytes_reserved, 4 * KiB);
    EXPECT_EQ(stats.peak_bytes_reserved, 8 * KiB);
}

TEST_F(CachingMemory, LargerThanTheLargestClassGoesStraightUpstream) {
    auto caching = make({.max_block_size = MiB});
    const CUstream s = stream_handle(1);
    for (int i = 0; i < 3; ++i) {
        const CUdeviceptr p = caching->allocate_pointer(MiB + 1, s);
        caching->deallocate_pointer(p, MiB + 1, s);
    }
    EXPECT_EQ(upstream->allocations, 3);
    EXPECT_EQ(upstream->frees, 3);
    const auto stats = caching->statistics();
    EXPECT_EQ(stats.oversized, 3u);
    EXPECT_EQ(stats.misses, 3u);
    EXPECT_EQ(stats.bytes_cached, 0u);
    EXPECT_EQ(stats.bytes_in_use, 0u);
}

TEST_F(CachingMemory, ReleaseWaitsForTheDeviceThenGivesEveryCachedBlockBack) {
    auto caching = make({.max_thread_cached_bytes = 4 * KiB});
    const CUstream s = stream_handle(1);
    std::vector<CUdeviceptr> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(caching->allocate_pointer(KiB, s));
    const CUdeviceptr kept = caching->allocate_pointer(KiB, s);
    for (CUdeviceptr p : blocks) caching->deallocate_pointer(p, KiB, s);
    caching->release();
    EXPECT_EQ(ops->synchronizations, 1);
    EXPECT_EQ(upstream->frees, 8);
    auto stats = caching->statistics();
    EXPECT_EQ(stats.bytes_cached, 0u);
    EXPECT_EQ(stats.bytes_in_use, KiB);  // the block in use is not touched
    EXPECT_EQ(stats.bytes_reserved, KiB);
    EXPECT_EQ(stats.releases, 1u);
    caching->release();  // nothing cached: nothing to wait for
    EXPECT_EQ(ops->synchronizations, 1);
    caching->deallocate_pointer(kept, KiB, s);
}

TEST_F(CachingMemory, AFailedWaitKeepsTheBlocksCached) {
    auto caching = make();
    const CUstream s = stream_handle(1);
    const CUdeviceptr p = caching->allocate_pointer(KiB, s);
    caching->deallocate_pointer(p, KiB, s);
    ops->fail_synchronize = true;
    EXPECT_THROW(caching->release(), DriverError);
    EXPECT_EQ(upstream->frees, 0);
    EXPECT_EQ(caching->statistics().bytes_cached, KiB);
    EXPECT_EQ(caching->allocate_pointer(KiB, s), p);  // still served, to its own stream
    ops->fail_synchronize = false;
    caching->deallocate_pointer(p, KiB, s);
}

TEST_F(CachingMemory, OutOfMemoryUpstreamReleasesTheCacheAndTriesOnceMore) {
    auto limited = std::make_shared<LimitedResource>(2 * MiB);
    const detail::ScopedCachingStreamOps scope(ops);
    auto caching = std::make_shared<CachingMemoryResource>(limited, CachingMemoryResourceOptions{});
    const CUstream s = stream_handle(1);
    const CUdeviceptr a = caching->allocate_pointer(MiB, s);
    const CUdeviceptr b = caching->allocate_pointer(MiB, s);
    caching->deallocate_pointer(a, MiB, s);
    caching->deallocate_pointer(b, MiB, s);
    // Another class: the cache holds all the upstream has.
    const CUdeviceptr c = caching->allocate_pointer(2 * MiB, s);
    EXPECT_NE(c, 0u);
    EXPECT_EQ(limited->refusals, 1);
    EXPECT_EQ(ops->synchronizations, 1);
    EXPECT_EQ(caching->statistics().releases, 1u);
    EXPECT_EQ(caching->statistics().bytes_reserved, 2 * MiB);
    // Still out of memory after the release: the error reaches the caller.
    try {
        caching->allocate_pointer(MiB, s);
        ADD_FAILURE() << "no DriverError";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.status(), CUDA_ERROR_OUT_OF_MEMORY);
    }
    caching->deallocate_pointer(c, 2 * MiB, s);
}

TEST_F(CachingMemory, AFinishedThreadsBlocksServeItsStreamFromTheSharedArena) {
    auto caching = make();
    const CUstream s1 = stream_handle(1);
    CUdeviceptr p = 0;
    std::thread([&] {
        p = caching->allocate_pointer(MiB, s1);
        caching->deallocate_pointer(p, MiB, s1);
    }).join();
    EXPECT_EQ(caching->statistics().bytes_cached, MiB);
    EXPECT_EQ(caching->statistics().misses, 1u);  // the finished thread's counters are kept
    const CUdeviceptr other = caching->allocate_pointer(MiB, stream_handle(2));
    EXPECT_NE(other, p);  // no event: not for others
    const CUdeviceptr again = caching->allocate_pointer(MiB, s1);
    EXPECT_EQ(again, p);
    // Blocks in use are the caller's to free (the resource gives back only what it caches).
    caching->deallocate_pointer(other, MiB, stream_handle(2));
    caching->deallocate_pointer(again, MiB, s1);
}

TEST_F(CachingMemory, AFinishedThreadsBlocksBeyondTheSharedBoundGoBack) {
    auto caching = make({.max_cached_bytes = KiB});
    std::thread([&] {
        std::vector<CUdeviceptr> blocks;
        for (int i = 0; i < 4; ++i)
            blocks.push_back(caching->allocate_pointer(KiB, stream_handle(1)));
        for (CUdeviceptr p : blocks) caching->deallocate_pointer(p, KiB, stream_handle(1));
    }).join();
    EXPECT_EQ(ops->synchronizations, 1);  // their stream may be gone: wait for the device
    EXPECT_EQ(upstream->frees, 3);
    EXPECT_EQ(caching->statistics().bytes_cached, KiB);
}

TEST_F(CachingMemory, DestructionGivesTheCachedBlocksBack) {
    {
        auto caching = make();
        const CUstream s = stream_handle(1);
        std::vector<CUdeviceptr> blocks;
        for (int i = 0; i < 5; ++i) blocks.push_back(caching->allocate_pointer(3 * KiB, s));
        for (CUdeviceptr p : blocks) caching->deallocate_pointer(p, 3 * KiB, s);
        std::thread([&] {
            const CUdeviceptr p = caching->allocate_pointer(KiB, stream_handle(2));
            caching->deallocate_pointer(p, KiB, stream_handle(2));
        }).join();
    }
    EXPECT_EQ(upstream->allocations, 6);
    EXPECT_EQ(upstream->frees, 6);
}

TEST_F(CachingMemory, BuffersHoldTheResourceAndFreeToTheCache) {
    auto caching = make();
    std::weak_ptr<CachingMemoryResource> weak = caching;
    auto box = std::make_shared<detail::StreamBox>();
    box->handle = stream_handle(7);
    box->owned = false;
    const Stream stream = detail::BoxAccess::make<Stream>(box);
    Buffer buffer = caching->allocate(100, stream);
    const CUdeviceptr address = buffer.handle();
    EXPECT_EQ(buffer.size(), 100u);
    EXPECT_TRUE(buffer.is_host_accessible());  // the upstream's
    EXPECT_EQ(buffer.memory_resource(), caching);
    buffer.close(stream);
    EXPECT_EQ(caching->statistics().bytes_cached, 256u);
    Buffer again = caching->allocate(200, stream);
    EXPECT_EQ(again.handle(), address);
    EXPECT_EQ(upstream->allocations, 1);
    caching.reset();
    EXPECT_FALSE(weak.expired());  // the buffer holds it
    again = Buffer();
    EXPECT_TRUE(weak.expired());
    EXPECT_EQ(upstream->frees, 1);
}

TEST_F(CachingMemory, RefusesANullUpstreamAndAnUnusableLargestBlock) {
    test::expect_invalid([] { CachingMemoryResource(nullptr); }, {"upstream", "null"});
    test::expect_invalid([&] { CachingMemoryResource(upstream, {.max_block_size = 0}); },
                         {"max_block_size", "test host memory"});
    test::expect_invalid(
        [&] { CachingMemoryResource(upstream, {.max_block_size = std::size_t{1} << 41}); },
        {"max_block_size"});
    EXPECT_EQ(make()->description(), "caching resource over test host memory");
}

// Threads allocate on their own stream, write their mark into every byte they were given, check
// it later and hand half their blocks to another thread, which checks and frees them on its own
// stream: a block handed out twice while in use shows as a wrong mark.
TEST_F(CachingMemory, ManyThreadsNeverGetABlockThatIsInUse) {
    auto caching = make({.max_block_size = 256 * KiB,
                         .max_thread_cached_bytes = 512 * KiB,
                         .max_cached_bytes = 2 * MiB});
    constexpr int threads = 8, rounds = 3000;
    struct Handed {
        CUdeviceptr pointer;
        std::size_t size;
        std::uint8_t mark;
    };
    std::mutex mailbox_mutex;
    std::vector<std::vector<Handed>> mailbox(threads);
    std::atomic<int> wrong{0};
    auto check = [&](const Handed& block) {
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(block.pointer);
        for (std::size_t i = 0; i < block.size; i += 61)
            if (bytes[i] != block.mark) return false;
        return bytes[block.size - 1] == block.mark;
    };
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::mt19937 random(static_cast<unsigned>(t) * 7919u + 1);
            const CUstream own = stream_handle(static_cast<std::uintptr_t>(t) + 1);
            std::vector<Handed> held;
            for (int round = 0; round < rounds; ++round) {
                if (round % 64 == 0 && t == 0) ops->mark_all_done();
                const std::size_t size = std::size_t{1} << (random() % 19);  // 1 B to 256 KiB
                const std::size_t bytes = size + random() % size;            // up to 512 KiB
                const auto mark = static_cast<std::uint8_t>(random() | 1);
                const CUdeviceptr p = caching->allocate_pointer(bytes, own);
                std::memset(reinterpret_cast<void*>(p), mark, bytes);
                held.push_back({p, bytes, mark});
                if (held.size() > 8 || random() % 3 == 0) {
                    const Handed block = held[random() % held.size()];
                    std::erase_if(held,
                                  [&](const Handed& h) { return h.pointer == block.pointer; });
                    if (!check(block)) ++wrong;
                    if (random() % 2) {
                        std::lock_guard lock(mailbox_mutex);
                        mailbox[(t + 1 + random() % (threads - 1)) % threads].push_back(block);
                    } else {
                        caching->deallocate_pointer(block.pointer, block.size, own);
                    }
                }
                std::vector<Handed> received;
                {
                    std::lock_guard lock(mailbox_mutex);
                    received.swap(mailbox[t]);
                }
                for (const Handed& block : received) {
                    if (!check(block)) ++wrong;
                    caching->deallocate_pointer(block.pointer, block.size, own);
                }
            }
            for (const Handed& block : held) {
                if (!check(block)) ++wrong;
                caching->deallocate_pointer(block.pointer, block.size, own);
            }
        });
    }
    for (auto& worker : workers) worker.join();
    for (auto& box : mailbox)
        for (const Handed& block : box) {
            if (!check(block)) ++wrong;
            caching->deallocate_pointer(block.pointer, block.size, stream_handle(99));
        }
    EXPECT_EQ(wrong, 0);
    const auto stats = caching->statistics();
    EXPECT_EQ(stats.bytes_in_use, 0u);
    EXPECT_GT(stats.hits, 0u);
    EXPECT_EQ(stats.hits + stats.misses, std::uint64_t{threads} * rounds);
    EXPECT_EQ(stats.bytes_reserved, stats.bytes_cached);
    caching->release();
    EXPECT_EQ(upstream->allocations, upstream->frees);
}

}  // namespace
