// The release thread (runtime/release/release.hpp) fed from many threads at once, without a driver:
// releases then run with idle = false (nothing is freed through the driver), on the release
// thread, each once, and what they hold is dropped there. The concurrency of the queue, the
// wait for idle and a release that queues another is what ThreadSanitizer checks here
// (scripts/tsan.sh); the waits on streams need a GPU (tests/gpu/runtime/lifetime_test.cpp).
// The wake-ups of a wait for idle run against a stand-in driver whose host functions run on a
// thread of the test, as the driver's own host-function thread runs them.
#include "runtime/release/release.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

using namespace cudacore::detail;

namespace {

// Notes the thread that dropped the last reference to it.
struct DropWitness {
    std::atomic<std::thread::id>* dropped_on;
    ~DropWitness() { dropped_on->store(std::this_thread::get_id()); }
};

// The stand-in driver's host-function thread: runs what cuLaunchHostFunc enqueued, in order, a
// few spins apart so that raised signals land at varied moments. Leaked with its thread: the
// release thread's exit handler waits for the functions enqueued to have run.
class HostFunctionThread {
public:
    static HostFunctionThread& instance() {
        static auto* thread = new HostFunctionThread;
        return *thread;
    }
    void enqueue(CUhostFn function, void* data) {
        {
            std::lock_guard lock(mutex_);
            queue_.emplace_back(function, data);
        }
        ready_.notify_one();
    }

private:
    HostFunctionThread() {
        std::thread([this] {
            unsigned spins = 0;
            volatile unsigned spin_sink = 0;  // the spins are not optimised away
            for (;;) {
                std::pair<CUhostFn, void*> next;
                {
                    std::unique_lock lock(mutex_);
                    ready_.wait(lock, [this] { return !queue_.empty(); });
                    next = queue_.front();
                    queue_.pop_front();
                }
                spins = spins * 1103515245u + 12345u;
                for (unsigned i = 0; i < (spins >> 20) % 64; ++i) spin_sink = i;
                next.first(next.second);
            }
        }).detach();
    }
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::pair<CUhostFn, void*>> queue_;
};

constexpr unsigned long long kContextId = 7;

CUresult stand_in_ctx_get_id(CUcontext, unsigned long long* id) {
    *id = kContextId;
    return CUDA_SUCCESS;
}
CUresult stand_in_stream_is_capturing(CUstream, CUstreamCaptureStatus* status) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}
CUresult stand_in_launch_host_func(CUstream, CUhostFn function, void* data) {
    HostFunctionThread::instance().enqueue(function, data);
    return CUDA_SUCCESS;
}

// Threads that each call wait_for_deferred_releases once per round, all at once. The state is
// shared with the threads, so a test that gives up on a hung wait can leave them behind.
class Waiters {
public:
    explicit Waiters(int count) : state_(std::make_shared<State>()) {
        for (int i = 0; i < count; ++i) {
            std::thread([state = state_] {
                std::uint64_t seen = 0;
                for (;;) {
                    {
                        std::unique_lock lock(state->mutex);
                        state->changed.wait(lock, [&] { return state->round != seen || state->stop; });
                        if (state->stop) return;
                        seen = state->round;
                    }
                    wait_for_deferred_releases();
                    {
                        std::lock_guard lock(state->mutex);
                        ++state->finished;
                    }
                    state->changed.notify_all();
                }
            }).detach();
        }
        count_ = count;
    }
    ~Waiters() {
        {
            std::lock_guard lock(state_->mutex);
            state_->stop = true;
        }
        state_->changed.notify_all();
    }
    void start_round() {
        {
            std::lock_guard lock(state_->mutex);
            ++state_->round;
            state_->finished = 0;
        }
        state_->changed.notify_all();
    }
    // Whether every waiter's wait of this round returned within `bound`.
    bool round_ended_within(std::chrono::seconds bound) {
        std::unique_lock lock(state_->mutex);
        return state_->changed.wait_for(lock, bound, [&] { return state_->finished == count_; });
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable changed;
        std::uint64_t round = 0;
        int finished = 0;
        bool stop = false;
    };
    std::shared_ptr<State> state_;
    int count_ = 0;
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

// Raised signals hand their contexts to the release thread, which drops them: a wait for idle
// that began while one was still to drop must return once it is dropped, whether the release
// thread was idle (its contexts dropped on their own) or busy with a queued release. Rounds of
// signals and releases, with waiters racing them; with everything done, a wait that has not
// returned within the bound was never woken.
TEST(DeferredReleases, AWaitForIdleWakesWhenTheContextsOfRaisedSignalsAreDropped) {
    static auto* api = new DriverApi;  // leaked: the release thread may read it at exit
    api->cuCtxGetId = stand_in_ctx_get_id;
    api->cuStreamIsCapturing = stand_in_stream_is_capturing;
    api->cuLaunchHostFunc = stand_in_launch_host_func;
    const DriverApi* previous = loaded_driver.exchange(api, std::memory_order_acq_rel);
    start_deferred_releases();
    auto context = std::make_shared<ContextBox>();
    context->retained = false;  // nothing to release through the driver
    context->handle = reinterpret_cast<CUcontext>(0x1000);
    context->id = kContextId;
    auto stream = std::make_shared<StreamBox>();
    stream->handle = reinterpret_cast<CUstream>(0x2000);
    stream->context = context;
    stream->owned = false;

    // Each round is many times slower under a sanitizer (GCC names it with __SANITIZE_*__,
    // clang with __has_feature).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    constexpr int kRounds = 4000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    constexpr int kRounds = 4000;
#else
    constexpr int kRounds = 20000;
#endif
#else
    constexpr int kRounds = 20000;
#endif
    constexpr std::chrono::seconds kBound{10};
    Waiters waiters(2);
    // Shared with the releases, which may outlive a test that gave up on a hung wait.
    auto released = std::make_shared<std::atomic<int>>(0);
    int queued = 0;
    for (int round = 0; round < kRounds; ++round) {
        // A signal on its own, then (every other round) a release waiting for another.
        ASSERT_NE(signal_when_done(*stream), nullptr);
        if (round % 2 == 1) {
            defer_release({stream}, [released](bool) { released->fetch_add(1); });
            ++queued;
        }
        waiters.start_round();
        ASSERT_TRUE(waiters.round_ended_within(kBound))
            << "a wait for idle was not woken in round " << round << " of " << kRounds;
        ASSERT_EQ(released->load(), queued) << "a wait returned before a queued release had run";
    }
    // The last signals may be raised after the last wait returned (a signal on its own is not
    // waited for): their holds go once they are.
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    while (context.use_count() > 2 && std::chrono::steady_clock::now() < deadline) {
        waiters.start_round();
        ASSERT_TRUE(waiters.round_ended_within(kBound)) << "a wait for idle was not woken";
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(context.use_count(), 2) << "the signals' holds on the context were all dropped";
    loaded_driver.store(previous, std::memory_order_release);
}
