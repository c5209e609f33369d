// The process-wide counters behind cache_stats(), updated by each cache implementation where the
// event happens.
#pragma once

#include "cudacore/cache_activity.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>

namespace cudacore::detail {

enum class CacheTier { memory, disk, remote };
enum class TierEvent { hit, miss, store, failure };

// Adds `count` to one of the tier's counters. Never throws.
void count_tier_event(CacheTier tier, TierEvent event, std::uint64_t count = 1) noexcept;
// A compile run on a miss, and how long it took. Never throws.
void count_compile(std::chrono::nanoseconds time) noexcept;

// An object's own counter that also counts into cache_stats(): `++counter` does both.
class TierCounter {
public:
    TierCounter(CacheTier tier, TierEvent event) noexcept : tier_(tier), event_(event) {}
    TierCounter& operator++() noexcept {
        value_.fetch_add(1, std::memory_order_relaxed);
        count_tier_event(tier_, event_);
        return *this;
    }
    operator std::uint64_t() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    CacheTier tier_;
    TierEvent event_;
    std::atomic<std::uint64_t> value_{0};
};

}  // namespace cudacore::detail
