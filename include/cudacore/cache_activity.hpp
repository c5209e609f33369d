/// @file
/// cache_stats(): what program caching did in this process, summed over every cache object: the
/// hits, misses, stores and failures of each kind of tier (memory, disk, remote) and the compiles
/// run on misses with the time they took. Per-object counters stay in ProgramCache::stats(); these
/// answer "how well does caching work in this process" without holding every cache object.
///
/// Thread-safe: every counter is an atomic updated where the event happens (relaxed order), so a
/// snapshot taken while other threads work may mix counts from slightly different moments.
#pragma once

#include <chrono>
#include <cstdint>

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

/// Process-wide program-cache counters (cache_stats()).
struct GlobalCacheStats {
    TierActivity memory{};  ///< MemoryProgramCache objects
    TierActivity disk{};    ///< DiskProgramCache objects
    TierActivity remote{};  ///< RemoteProgramCache objects
    /// Compiles run on a miss by get_or_compile() and compile_cached() (so also by compile_many()
    /// and mpi::compile_distributed() with a cache), failed ones included.
    std::uint64_t compiles = 0;
    std::chrono::nanoseconds compile_time{0};  ///< the wall time those compiles took, summed
};

/// This process's counters since it started or since reset_cache_stats(). Never throws;
/// thread-safe (see this file's description).
GlobalCacheStats cache_stats() noexcept;

/// Sets every counter of cache_stats() to zero (per-object stats() are left alone). Never
/// throws; thread-safe, though a reset while other threads count may keep some of their counts.
void reset_cache_stats() noexcept;

}  // namespace cudacore
