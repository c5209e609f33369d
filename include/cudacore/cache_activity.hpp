/// @file
/// cache_stats(): what program caching did in this process, summed over every cache object: each
/// kind of tier's counters under its name ("memory", "disk", "remote"), and the compiles run on
/// misses. Per-object counters stay in ProgramCache::stats(). Thread-safe: relaxed atomic
/// counters, so a snapshot taken while other threads work may mix slightly different moments.
///
///     const TierActivity disk = cudacore::cache_stats().tier("disk");
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace cudacore {

/// The counters of one kind of cache tier, summed over every cache object of that kind.
struct TierActivity {
    std::uint64_t hits = 0;    ///< gets that returned an entry
    std::uint64_t misses = 0;  ///< gets that returned none (damaged entries and failures included)
    std::uint64_t stores = 0;  ///< puts that stored an entry
    /// Gets and puts that failed (damaged or foreign entries, stores not done, server failures).
    std::uint64_t failures = 0;
};

// The struct's own constructors and copies set the deprecated members without a warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/// Process-wide program-cache counters (cache_stats()).
struct GlobalCacheStats {
    GlobalCacheStats() = default;
    /// The counters of each kind of tier that counted since the start or reset, by name.
    std::map<std::string, TierActivity, std::less<>> tiers{};
    /// Compiles run on a miss by get_or_compile() and compile_cached(), failed ones included.
    std::uint64_t compiles = 0;
    std::chrono::nanoseconds compile_time{0};  ///< the wall time those compiles took, summed
    /// Compiles whose code compile_cached returned without storing it (each also raises a
    /// not_cached warning that says why): non-zero where nothing seems to be cached, as when the
    /// compile worker the check compile runs in is missing.
    std::uint64_t not_cached = 0;

    /// The counters of the tier named `name`, zero when it counted nothing.
    TierActivity tier(std::string_view name) const noexcept;

    /// tier("memory").
    [[deprecated("use tier(\"memory\")")]] TierActivity memory{};
    /// tier("disk").
    [[deprecated("use tier(\"disk\")")]] TierActivity disk{};
    /// tier("remote").
    [[deprecated("use tier(\"remote\")")]] TierActivity remote{};
};
#pragma GCC diagnostic pop

/// This process's counters since it started or since reset_cache_stats().
GlobalCacheStats cache_stats() noexcept;

/// Sets every counter of cache_stats() to zero (not per-object stats()).
void reset_cache_stats() noexcept;

}  // namespace cudacore
