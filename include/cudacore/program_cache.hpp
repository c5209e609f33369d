/// @file
/// ProgramCache: where compiled ObjectCode is kept between compiles, keyed by CacheKey.
///
/// Implementations: MemoryProgramCache (this process, bounded in bytes, least recently used
/// evicted), DiskProgramCache (a private directory shared by the user's processes),
/// RemoteProgramCache (a Redis server shared by many machines) and TieredProgramCache (several of
/// them used as one, fastest first). Compile through a cache with compile_cached()
/// (cached_compile.hpp).
///
/// Every implementation is safe to use from many threads at once. get() never returns an entry
/// that fails its integrity check: such an entry counts as a miss and is dropped.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/object_code.hpp"

#include <cstdint>
#include <optional>

namespace cudacore {

/// A program cache's counters and size.
struct CacheStats {
    /// Counted by this cache object since it was created.
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;        ///< includes corrupt entries
    std::uint64_t insertions = 0;
    std::uint64_t evictions = 0;     ///< entries removed to stay under the byte bound
    std::uint64_t corrupt_entries = 0;  ///< entries that failed their check, removed
    std::uint64_t failed_stores = 0;    ///< puts that failed (full disk, read-only directory...)
    /// What the cache holds now (for a disk cache: all processes' entries).
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;            ///< a disk cache's includes its temporary files
    std::uint64_t max_bytes = 0;
    std::uint64_t temporary_files = 0;  ///< a disk cache's files being written or left by killed writers
};

/// The interface of program caches: get, put, stats, clear.
class ProgramCache {
public:
    virtual ~ProgramCache() = default;

    /// The code stored under `key`, or nullopt when there is none (or it was corrupt).
    virtual std::optional<ObjectCode> get(const CacheKey& key) = 0;
    /// Stores `code` under `key`, replacing what was there, then evicts least recently used
    /// entries until the cache is within its byte bound (an entry larger than the bound is not
    /// kept). Throws CacheError when the store fails (a disk cache's I/O error).
    virtual void put(const CacheKey& key, const ObjectCode& code) = 0;
    virtual CacheStats stats() const = 0;
    /// Removes every entry.
    virtual void clear() = 0;
};

}  // namespace cudacore
