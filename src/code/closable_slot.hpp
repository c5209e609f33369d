// What the copies of a Program or Linker share: whether one of them was closed, and the compiler
// state of the last compile or link any of them made, released when replaced, at close(), or with
// the last copy (docs/errors-and-lifetime.md, "Closing and resetting").
#pragma once

#include <atomic>
#include <mutex>
#include <utility>

namespace cudacore::detail {

template <class Held>
class ClosableSlot {
public:
    // Holds `held` from now on, releasing what was held (after close(): releases `held`). The
    // release runs outside the lock; its errors are the held type's destructor's to ignore.
    void keep(Held held) noexcept {
        {
            std::lock_guard lock(mutex_);
            if (!closed_.load(std::memory_order_relaxed)) std::swap(held_, held);
        }
    }
    // What is held (a copy: it stays valid while the copy lives). Never throws but bad_alloc.
    Held held() const {
        std::lock_guard lock(mutex_);
        return held_;
    }
    bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
    // Marks every copy closed and releases what is held. Closing again does nothing.
    void close() noexcept {
        Held gone{};
        {
            std::lock_guard lock(mutex_);
            closed_.store(true, std::memory_order_release);
            std::swap(held_, gone);
        }
    }

private:
    mutable std::mutex mutex_;
    std::atomic<bool> closed_{false};
    Held held_{};
};

}  // namespace cudacore::detail
