#include "cache/activity_counters.hpp"

#include "support/cudacore_trace.hpp"

namespace cudacore {
namespace {

struct TierCounters {
    std::atomic<std::uint64_t> events[4] = {};  // by TierEvent
};

struct Counters {
    TierCounters tiers[3];  // by CacheTier
    std::atomic<std::uint64_t> compiles{0};
    std::atomic<std::int64_t> compile_ns{0};
};

// Never destroyed: caches in static objects count while other statics are destroyed.
Counters& counters() noexcept {
    static auto* all = new Counters;
    return *all;
}

TierActivity snapshot(const TierCounters& tier) noexcept {
    TierActivity activity;
    activity.hits = tier.events[static_cast<int>(detail::TierEvent::hit)].load(std::memory_order_relaxed);
    activity.misses = tier.events[static_cast<int>(detail::TierEvent::miss)].load(std::memory_order_relaxed);
    activity.stores = tier.events[static_cast<int>(detail::TierEvent::store)].load(std::memory_order_relaxed);
    activity.failures =
        tier.events[static_cast<int>(detail::TierEvent::failure)].load(std::memory_order_relaxed);
    return activity;
}

}  // namespace

namespace detail {

void count_tier_event(CacheTier tier, TierEvent event, std::uint64_t count) noexcept {
    // Each event is also a mark on the timeline, inside the lookup or store it ends.
    cudacore_mark(tracing::CudacoreCategory::cache, [&] {
        static constexpr const char* tier_names[] = {"memory", "disk", "remote"};
        static constexpr const char* event_names[] = {"hit", "miss", "store", "failure"};
        return std::string("cache ") + event_names[static_cast<int>(event)] + " " +
               tier_names[static_cast<int>(tier)];
    });
    counters().tiers[static_cast<int>(tier)].events[static_cast<int>(event)].fetch_add(
        count, std::memory_order_relaxed);
}

void count_compile(std::chrono::nanoseconds time) noexcept {
    counters().compiles.fetch_add(1, std::memory_order_relaxed);
    counters().compile_ns.fetch_add(time.count(), std::memory_order_relaxed);
}

}  // namespace detail

GlobalCacheStats cache_stats() noexcept {
    const Counters& all = counters();
    GlobalCacheStats stats;
    stats.memory = snapshot(all.tiers[static_cast<int>(detail::CacheTier::memory)]);
    stats.disk = snapshot(all.tiers[static_cast<int>(detail::CacheTier::disk)]);
    stats.remote = snapshot(all.tiers[static_cast<int>(detail::CacheTier::remote)]);
    stats.compiles = all.compiles.load(std::memory_order_relaxed);
    stats.compile_time = std::chrono::nanoseconds(all.compile_ns.load(std::memory_order_relaxed));
    return stats;
}

void reset_cache_stats() noexcept {
    Counters& all = counters();
    for (auto& tier : all.tiers)
        for (auto& event : tier.events) event.store(0, std::memory_order_relaxed);
    all.compiles.store(0, std::memory_order_relaxed);
    all.compile_ns.store(0, std::memory_order_relaxed);
}

}  // namespace cudacore
