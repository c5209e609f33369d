// A lock for critical sections of a few instructions on hot paths (the events a context keeps
// for reuse, a capture's holdings): one atomic exchange to take it and a release
// store to give it back, where an uncontended std::mutex costs two calls into the C library.
// Waiters spin briefly, then yield the processor. Usable with std::lock_guard.
#pragma once

#include <atomic>
#include <thread>

namespace cudacore::detail {

class SpinLock {
public:
    void lock() noexcept {
        while (locked_.exchange(true, std::memory_order_acquire)) [[unlikely]] {
            for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins)
                if (spins >= 64) std::this_thread::yield();
        }
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> locked_{false};
};

}  // namespace cudacore::detail
