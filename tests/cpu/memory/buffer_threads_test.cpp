// Buffers made on one thread and dropped on another (the boxes travel between threads' caches
// through the shared free list, in batches): every allocation is freed once, and boxes reused
// across threads come back empty.
#include "empty_stream.hpp"
#include "host_memory_resource.hpp"

#include "cudacore/buffer.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using test::HostMemoryResource;
using test::no_stream;

TEST(BufferThreads, BuffersMadeOnOneThreadAndDroppedOnOthersAreFreedOnce) {
    auto resource = std::make_shared<HostMemoryResource>();
    constexpr int producers = 2, per_producer = 20000;
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Buffer> queue;
    int finished = 0;
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&] {
            for (int i = 0; i < per_producer; ++i) {
                Buffer buffer = resource->allocate(16 + i % 64, no_stream());
                std::lock_guard lock(mutex);
                queue.push_back(std::move(buffer));
                ready.notify_one();
            }
            std::lock_guard lock(mutex);
            ++finished;
            ready.notify_all();
        });
    }
    std::thread consumer([&] {
        for (;;) {
            std::unique_lock lock(mutex);
            ready.wait(lock, [&] { return !queue.empty() || finished == producers; });
            if (queue.empty()) return;
            Buffer buffer = std::move(queue.front());
            queue.pop_front();
            lock.unlock();
            EXPECT_TRUE(buffer.owns_memory());
            EXPECT_EQ(buffer.memory_resource(), resource);
        }  // dropped here, on the consumer thread
    });
    for (auto& thread : threads) thread.join();
    consumer.join();
    EXPECT_EQ(resource->allocations, producers * per_producer);
    EXPECT_EQ(resource->frees, producers * per_producer);
    // Boxes given back by the consumer come back to the producers as new, empty boxes.
    Buffer fresh = resource->allocate(8, no_stream());
    EXPECT_EQ(fresh.size(), 8u);
    EXPECT_FALSE(fresh.is_closed());
}

}  // namespace
