#include "support/parallel_steps.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace cudacore::detail {

void run_steps(std::size_t count, unsigned workers, const std::function<bool(std::size_t)>& step) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stopped{false};
    auto work = [&] {
        for (;;) {
            if (stopped.load(std::memory_order_relaxed)) return;
            const std::size_t i = next.fetch_add(1);
            if (i >= count) return;
            if (!step(i)) stopped.store(true, std::memory_order_relaxed);
        }
    };
    std::vector<std::thread> threads;
    const std::size_t threads_wanted = std::min<std::size_t>(std::max(1u, workers), count);
    for (std::size_t w = 1; w < threads_wanted; ++w) threads.emplace_back(work);
    work();
    for (auto& thread : threads) thread.join();
}

}  // namespace cudacore::detail
