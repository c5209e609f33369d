#include "cudacore/cache_activity.hpp"

#include <string>

#include "cache/activity_counters.hpp"
#include "support/cudacore_trace.hpp"

namespace cudacore {
namespace {

struct CompileCounters {
    std::atomic<std::uint64_t> compiles{0};
    std::atomic<std::int64_t> compile_ns{0};
    std::atomic<std::uint64_t> not_cached{0};
};

// Never destroyed: caches in static objects count while other statics are destroyed.
CompileCounters& compile_counters() noexcept {
    static auto* all = new CompileCounters;
    return *all;
}

}  // namespace

namespace detail {

constinit CacheTier CacheTier::memory{"memory"};
constinit std::atomic<CacheTier*> CacheTier::first_{nullptr};

void CacheTier::join() noexcept {
    bool joined = false;
    if (!listed_.compare_exchange_strong(joined, true, std::memory_order_acq_rel)) return;
    CacheTier* head = first_.load(std::memory_order_relaxed);
    do {
        next_ = head;
    } while (!first_.compare_exchange_weak(head, this, std::memory_order_release,
                                           std::memory_order_relaxed));
}

void CacheTier::mark(TierEvent event) noexcept {
    // Each event is also a mark on the timeline, inside the lookup or store it ends.
    cudacore_mark(tracing::CudacoreCategory::cache, [&] {
        static constexpr const char* event_names[] = {"hit", "miss", "store", "failure"};
        return std::string("cache ") + event_names[static_cast<int>(event)] + " " +
               std::string(name_);
    });
}

TierActivity CacheTier::snapshot() const noexcept {
    auto read = [&](TierEvent event) {
        return events_[static_cast<int>(event)].load(std::memory_order_relaxed);
    };
    TierActivity activity;
    activity.hits = read(TierEvent::hit);
    activity.misses = read(TierEvent::miss);
    activity.stores = read(TierEvent::store);
    activity.failures = read(TierEvent::failure);
    return activity;
}

void CacheTier::reset() noexcept {
    for (auto& event : events_) event.store(0, std::memory_order_relaxed);
}

void count_compile(std::chrono::nanoseconds time) noexcept {
    compile_counters().compiles.fetch_add(1, std::memory_order_relaxed);
    compile_counters().compile_ns.fetch_add(time.count(), std::memory_order_relaxed);
}

void count_not_cached() noexcept { compile_counters().not_cached.fetch_add(1, std::memory_order_relaxed); }

}  // namespace detail

TierActivity GlobalCacheStats::tier(std::string_view name) const noexcept {
    const auto found = tiers.find(name);
    return found == tiers.end() ? TierActivity{} : found->second;
}

GlobalCacheStats cache_stats() noexcept {
    GlobalCacheStats stats;
    try {
        detail::CacheTier::for_each([&](const detail::CacheTier& tier) {
            stats.tiers.emplace(std::string(tier.name()), tier.snapshot());
        });
    } catch (...) {
        // No memory for a tier's name: the stats without the tiers, as documented.
        stats.tiers.clear();
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    stats.memory = stats.tier("memory");
    stats.disk = stats.tier("disk");
    stats.remote = stats.tier("remote");
#pragma GCC diagnostic pop
    const CompileCounters& compiles = compile_counters();
    stats.compiles = compiles.compiles.load(std::memory_order_relaxed);
    stats.compile_time =
        std::chrono::nanoseconds(compiles.compile_ns.load(std::memory_order_relaxed));
    stats.not_cached = compiles.not_cached.load(std::memory_order_relaxed);
    return stats;
}

void reset_cache_stats() noexcept {
    detail::CacheTier::for_each([](detail::CacheTier& tier) { tier.reset(); });
    compile_counters().compiles.store(0, std::memory_order_relaxed);
    compile_counters().compile_ns.store(0, std::memory_order_relaxed);
    compile_counters().not_cached.store(0, std::memory_order_relaxed);
}

}  // namespace cudacore
