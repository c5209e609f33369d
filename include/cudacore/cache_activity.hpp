/// @file
/// cache_stats(): what program caching did in this process, summed over every cache object: the
/// hits, misses, stores and failures of each kind of tier, under the tier's name ("memory",
/// "disk", "remote"), and the compiles run on misses with the time they took. Per-object counters
/// stay in ProgramCache::stats(); these answer "how well does caching work in this process"
/// without holding every cache object.
///
///     const TierActivity disk = cudacore::cache_stats().tier("disk");
///
/// Thread-safe: every counter is an atomic updated where the event happens (relaxed order), so a
/// snapshot taken while other threads work may mix counts from slightly different moments.
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
    /// Gets and puts that failed: a damaged or foreign entry read, a store not done (I/O error,
    /// full disk, server down or refusing, skipped while backing off), a server that failed a get.
    std::uint64_t failures = 0;
};

// The deprecated members are set by the struct's own constructors and copies without a warning;
// a warning comes where code names them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
/// Process-wide program-cache counters (cache_stats()).
struct GlobalCacheStats {
    GlobalCacheStats() = default;
    /// The counters of each kind of tier that counted since the process started or since
    /// reset_cache_stats(), by the tier's name: "memory" (MemoryProgramCache objects), "disk"
    /// (DiskProgramCache), "remote" (RemoteProgramCache), and any tier added later under its own.
    std::map<std::string, TierActivity, std::less<>> tiers{};
    /// Compiles run on a miss by get_or_compile() and compile_cached() (so also by compile_many()
    /// and mpi::compile_distributed() with a cache), failed ones included.
    std::uint64_t compiles = 0;
    std::chrono::nanoseconds compile_time{0};  ///< the wall time those compiles took, summed

    /// The counters of the tier named `name` in `tiers`, zero when it counted nothing. Never
    /// throws.
    TierActivity tier(std::string_view name) const noexcept;

    /// The "memory" tier's counters, as tier("memory") gives them.
    [[deprecated("use tier(\"memory\")")]] TierActivity memory{};
    /// The "disk" tier's counters, as tier("disk") gives them.
    [[deprecated("use tier(\"disk\")")]] TierActivity disk{};
    /// The "remote" tier's counters, as tier("remote") gives them.
    [[deprecated("use tier(\"remote\")")]] TierActivity remote{};
};
#pragma GCC diagnostic pop

/// This process's counters since it started or since reset_cache_stats(). Never throws (where
/// no memory is left for the table of tiers, `tiers` is empty); thread-safe (see this file's
/// description).
GlobalCacheStats cache_stats() noexcept;

/// Sets every counter of cache_stats() to zero (per-object stats() are left alone). Never
/// throws; thread-safe, though a reset while other threads count may keep some of their counts.
void reset_cache_stats() noexcept;

}  // namespace cudacore
