// The process-wide counters behind cache_stats(), updated by each cache implementation where the
// event happens. Keyed by tier: each kind of tier owns one CacheTier under its name, so a new
// tier adds its own and edits nothing here or in cache_stats().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "cudacore/cache_activity.hpp"

namespace cudacore::detail {

enum class TierEvent { hit, miss, store, failure };

// One kind of tier's counters in cache_stats().tiers, under `name`. Each tier defines its own as
// a constinit object of static storage (never destroyed: caches in static objects count while
// other statics are destroyed); it joins cache_stats() when it first counts. Thread-safe.
class CacheTier {
public:
    explicit constexpr CacheTier(std::string_view name) noexcept : name_(name) {}
    CacheTier(const CacheTier&) = delete;
    CacheTier& operator=(const CacheTier&) = delete;

    std::string_view name() const noexcept { return name_; }
    // Adds `count` to the tier's counter of `event`, and marks it on the timeline. Never throws.
    void count(TierEvent event, std::uint64_t count = 1) noexcept {
        if (!listed_.load(std::memory_order_acquire)) join();
        mark(event);
        events_[static_cast<int>(event)].fetch_add(count, std::memory_order_relaxed);
    }
    TierActivity snapshot() const noexcept;
    void reset() noexcept;

    // Calls `each(tier)` for every tier that has counted (the latest to join first).
    template <class Each>
    static void for_each(Each&& each) {
        for (CacheTier* tier = first_.load(std::memory_order_acquire); tier != nullptr;
             tier = tier->next_)
            each(*tier);
    }

    // The memory tier's counters: the memory tier lives in src/cache itself.
    static CacheTier memory;

private:
    void join() noexcept;                 // adds this tier to the list for_each walks, once
    void mark(TierEvent event) noexcept;  // the event's mark on the timeline (cudacore_mark)

    std::string_view name_;
    std::atomic<std::uint64_t> events_[4] = {};  // by TierEvent
    std::atomic<bool> listed_{false};
    CacheTier* next_ = nullptr;  // set before the tier is published in first_, then never again
    static std::atomic<CacheTier*> first_;
};

// Adds `count` to one of the tier's counters. Never throws.
inline void count_tier_event(CacheTier& tier, TierEvent event, std::uint64_t count = 1) noexcept {
    tier.count(event, count);
}
// A compile run on a miss, and how long it took. Never throws.
void count_compile(std::chrono::nanoseconds time) noexcept;
// A compile whose code was returned without being stored. Never throws.
void count_not_cached() noexcept;

// An object's own counter that also counts into cache_stats(): `++counter` does both.
class TierCounter {
public:
    TierCounter(CacheTier& tier, TierEvent event) noexcept : tier_(tier), event_(event) {}
    TierCounter& operator++() noexcept {
        value_.fetch_add(1, std::memory_order_relaxed);
        tier_.count(event_);
        return *this;
    }
    operator std::uint64_t() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    CacheTier& tier_;
    TierEvent event_;
    std::atomic<std::uint64_t> value_{0};
};

}  // namespace cudacore::detail
