#include "remote/server_backoff.hpp"

#include <algorithm>

namespace cudacore::detail {
namespace {

std::int64_t now_nanoseconds() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

bool ServerBackoff::may_try(bool& probing) {
    probing = false;
    std::int64_t at = retry_at_ns_.load(std::memory_order_acquire);
    if (at == 0) return true;
    const std::int64_t now = now_nanoseconds();
    if (now < at) return false;
    std::int64_t delay_ms;
    {
        std::lock_guard lock(mutex_);
        delay_ms = delay_ms_;
    }
    // Others keep skipping while this one tries (for at most the delay, then another may).
    if (!retry_at_ns_.compare_exchange_strong(at, now + delay_ms * 1'000'000)) return false;
    probing = true;
    return true;
}

void ServerBackoff::answered() {
    if (retry_at_ns_.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(mutex_);
    retry_at_ns_.store(0, std::memory_order_release);
    delay_ms_ = retry_after_.count();
}

void ServerBackoff::failed(bool probing) {
    std::lock_guard lock(mutex_);
    const std::int64_t now = now_nanoseconds();
    if (probing) {
        delay_ms_ = std::min<std::int64_t>(delay_ms_ * 2, max_retry_after_.count());
    } else if (retry_at_ns_.load() != 0) {
        return;
    } else {
        delay_ms_ = retry_after_.count();
    }
    retry_at_ns_.store(now + delay_ms_ * 1'000'000, std::memory_order_release);
}

}  // namespace cudacore::detail
