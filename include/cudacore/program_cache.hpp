/// @file
/// ProgramCache: where compiled ObjectCode is kept between compiles, keyed by CacheKey; compile
/// through one with compile_cached(). Guide: docs/caching.md.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/cancellation.hpp"
#include "cudacore/object_code.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudacore {

/// A program cache's counters (of this object's own get() and put() calls) and size.
struct CacheStats {
    /// get() calls that returned an entry.
    std::uint64_t hits = 0;
    /// get() calls that returned none (a corrupt entry too; a remote cache's failed gets too).
    std::uint64_t misses = 0;
    std::uint64_t insertions = 0;    ///< successful puts
    std::uint64_t evictions = 0;     ///< entries removed to stay under the byte (or entry) bound
    std::uint64_t corrupt_entries = 0;  ///< entries that failed their check, removed
    std::uint64_t failed_stores = 0;    ///< puts that failed (full disk, read-only directory...)
    /// What the cache holds now (for a disk cache: all processes' entries).
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;            ///< a disk cache's includes its temporary files
    std::uint64_t max_bytes = 0;        ///< the byte bound
    std::uint64_t temporary_files = 0;  ///< a disk cache's files being written or left by killed writers
    /// The bound on the number of entries (a MemoryProgramCache's); 0: none.
    std::uint64_t max_entries = 0;
};

/// Held by the one caller compiling a key for everyone; must not outlive its cache.
class CompileLease {
public:
    virtual ~CompileLease();
};

/// What ProgramCache::await_compile_turn decided for a missing key.
struct CompileTurn {
    /// The entry another process stored while this one waited: use it, do not compile.
    std::optional<ObjectCode> found{};
    /// Held while compiling and storing; null: compile without a lease.
    std::unique_ptr<CompileLease> lease{};
    /// The caller's token was cancelled: nothing found, no lease; the caller gives up.
    bool cancelled = false;
};

/// The interface of program caches. Every implementation is thread-safe; get() never returns an
/// entry that fails its integrity check (a miss; the entry is dropped).
class ProgramCache {
public:
    virtual ~ProgramCache();

    /// The code stored under `key`, or nullopt when there is none (or it was corrupt).
    virtual std::optional<ObjectCode> get(const CacheKey& key) = 0;
    /// Stores `code` under `key`, evicting to the byte bound. CacheError when it fails.
    virtual void put(const CacheKey& key, const ObjectCode& code) = 0;
    /// Stores every entry as put() does. CacheError at the first failure.
    virtual void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries);
    /// put_many(), each entry remembering `trust` (the default forgets it).
    virtual void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                     const std::string& trust);
    /// get(key), and `trust` set to its entry's trust: empty for one this user's processes
    /// compiled (stored by put() into a cache of theirs). The default, for caches that keep no
    /// trust per entry, gives entry_trust(): a shared cache's entries are never "compiled here".
    virtual std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust);
    /// This cache's counters and size.
    virtual CacheStats stats() const = 0;
    /// Removes every entry.
    virtual void clear() = 0;

    /// Called after a miss, before compiling `key`: returns the lease (compile and store) or the
    /// entry another process stored, waiting up to the cache's bound. The default waits for
    /// nothing. Never throws CacheError.
    virtual CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find);
    /// As above, returning `cancelled` (no lease) once `cancellation` is cancelled.
    virtual CompileTurn await_compile_turn(const CacheKey& key,
                                           const std::function<std::optional<ObjectCode>()>& find,
                                           const CancellationToken& cancellation);

    /// Whom entries come from: empty for the user's own processes'; else a label.
    virtual std::string entry_trust() const;

    /// The keys of every entry held now (nullopt: cannot list them). CacheError.
    virtual std::optional<std::vector<CacheKey>> entry_keys() const;
};

}  // namespace cudacore
