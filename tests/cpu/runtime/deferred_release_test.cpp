// The release thread (runtime/release/release.hpp) fed from many threads at once, without a driver:
// releases then run with idle = false (nothing is freed through the driver), on the release
// thread, each once, and what they hold is dropped there. The concurrency of the queue, the
// wait for idle and a release that queues another is what ThreadSanitizer checks here
// (scripts/tsan.sh); the waits on streams need a GPU (tests/gpu/runtime/lifetime_test.cpp).
#include "runtime/release/release.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace cudacore::detail;

namespace {

// Notes the thread that dropped the last reference to it.
struct DropWitness {
    std::atomic<std::thread::id>* dropped_on;
    ~DropWitness() { dropped_on->store(std::this_thread::get_id()); }
};

}  // namespace

TEST(DeferredReleases, ReleasesQueuedFromManyThreadsRunOnceEachOnTheReleaseThread) {
    ASSERT_EQ(driver_if_loaded(), nullptr) << "this test runs without a driver";
    start_deferred_releases();
    constexpr int kThreads = 4;
    constexpr int kPerThread = 250;
    std::vector<std::atomic<int>> runs(kThreads * kPerThread);
    std::atomic<int> idle_runs{0};
    std::mutex mutex;
    std::set<std::thread::id> release_threads;
    std::set<std::thread::id> queueing_threads;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            {
                std::lock_guard lock(mutex);
                queueing_threads.insert(std::this_thread::get_id());
            }
            for (int i = 0; i < kPerThread; ++i) {
                const int index = t * kPerThread + i;
                defer_release({}, [&, index](bool idle) {
                    runs[index].fetch_add(1);
                    if (idle) idle_runs.fetch_add(1);
                    std::lock_guard lock(mutex);
                    release_threads.insert(std::this_thread::get_id());
                });
                // Waits from other threads while releases are queued and run.
                if (i % 50 == 0) wait_for_deferred_releases();
            }
        });
    }
    for (auto& thread : threads) thread.join();
    wait_for_deferred_releases();
    for (std::size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "release " << i;
    EXPECT_EQ(idle_runs.load(), 0) << "without a driver nothing may be freed through it";
    ASSERT_EQ(release_threads.size(), 1u) << "every release runs on the one release thread";
    EXPECT_EQ(queueing_threads.count(*release_threads.begin()), 0u)
        << "a release ran on the thread that queued it";
}

TEST(DeferredReleases, WhatAReleaseHoldsIsDroppedOnTheReleaseThreadAndChainedReleasesAreWaitedFor) {
    start_deferred_releases();
    std::atomic<std::thread::id> dropped_on{};
    std::atomic<std::thread::id> ran_on{};
    std::atomic<bool> second_ran{false};
    {
        std::shared_ptr<DropWitness> held(new DropWitness{&dropped_on});
        // The release holds the only reference.
        defer_release({}, [held = std::move(held), &ran_on, &second_ran](bool) {
            ran_on.store(std::this_thread::get_id());
            // A release that queues another (a graph releasing what a library held).
            defer_release({}, [&second_ran](bool) { second_ran.store(true); });
        });
    }
    wait_for_deferred_releases();
    EXPECT_TRUE(second_ran.load()) << "the wait must cover releases queued by releases";
    EXPECT_NE(ran_on.load(), std::thread::id{});
    EXPECT_NE(ran_on.load(), std::this_thread::get_id());
    EXPECT_EQ(dropped_on.load(), ran_on.load()) << "what a release held is dropped where it ran";
}
