#include "support/parallel_steps.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cudacore::detail {

namespace {

// The steps' shared state: the next step to hand out, and whether a step asked to stop.
struct Steps {
    std::size_t count;
    const std::function<bool(std::size_t)>& step;
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stopped{false};

    bool left() const { return !stopped.load(std::memory_order_relaxed) && next.load() < count; }

    void work() {
        for (;;) {
            if (stopped.load(std::memory_order_relaxed)) return;
            const std::size_t i = next.fetch_add(1);
            if (i >= count) return;
            if (!step(i)) stopped.store(true, std::memory_order_relaxed);
        }
    }

    // `helpers` threads more, joined before returning.
    void work_with_helpers(std::size_t helpers) {
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < helpers; ++w) threads.emplace_back([this] { work(); });
        for (auto& thread : threads) thread.join();
    }
};

}  // namespace

void run_steps(std::size_t count, unsigned workers, const std::function<bool(std::size_t)>& step) {
    run_steps(count, workers, std::chrono::nanoseconds::zero(), step);
}

void run_steps(std::size_t count, unsigned workers, std::chrono::nanoseconds helpers_after,
               const std::function<bool(std::size_t)>& step) {
    Steps steps{count, step};
    const std::size_t helpers = std::min<std::size_t>(std::max(1u, workers), count) - (count ? 1 : 0);
    if (helpers == 0) return steps.work();
    if (helpers_after <= std::chrono::nanoseconds::zero()) {
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < helpers; ++w) threads.emplace_back([&] { steps.work(); });
        steps.work();
        for (auto& thread : threads) thread.join();
        return;
    }
    std::mutex mutex;
    std::condition_variable woken;
    bool done = false;
    // Waits for the moment, then starts the helpers if steps are left (and joins them).
    std::thread watcher([&] {
        {
            std::unique_lock lock(mutex);
            if (woken.wait_for(lock, helpers_after, [&] { return done; })) return;
        }
        if (steps.left()) steps.work_with_helpers(helpers);
    });
    steps.work();
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    woken.notify_one();
    watcher.join();
}

}  // namespace cudacore::detail
