/// @file
/// ProgramCache: where compiled ObjectCode is kept between compiles, keyed by CacheKey.
/// Implementations: MemoryProgramCache (this process, bounded, least recently used evicted),
/// DiskProgramCache (a private directory shared by the user's processes), RemoteProgramCache (a
/// Redis server shared by many machines) and TieredProgramCache (several of them as one, fastest
/// first). Compile through a cache with compile_cached() (cached_compile.hpp). Every
/// implementation is safe to use from many threads at once; get() never returns an entry that
/// fails its integrity check (it counts as a miss and is dropped).
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

/// A program cache's counters and size. The counters count calls of this object's get() and
/// put(), whoever makes them: a TieredProgramCache counts each of its own gets once, and its
/// tiers count the gets it makes of them (a get that a tier answers is a miss in the tiers above
/// it); get_or_compile() looks a key up once per call (see there); compile_cached() looks up
/// each key it needs (for C++ code that names a path, the marker, then the code) and, on a miss, once
/// more when its compile is in flight. hits / (hits + misses) is the share of get() calls that
/// found their entry.
struct CacheStats {
    /// Counted by this cache object since it was created: get() calls that returned an entry.
    std::uint64_t hits = 0;
    /// get() calls that returned none: no entry, or one that failed its check (also counted in
    /// corrupt_entries); a RemoteProgramCache also counts the gets it could not make (a server
    /// down or backed off from).
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

/// Held by the one caller that compiles a key for everyone sharing a cache (see
/// ProgramCache::await_compile_turn); destroying it lets the others go on. Its destructor never
/// throws. It must not outlive the cache that gave it.
class CompileLease {
public:
    virtual ~CompileLease();
};

/// What ProgramCache::await_compile_turn decided for a missing key.
struct CompileTurn {
    /// The entry another process stored while this one waited: use it, do not compile.
    std::optional<ObjectCode> found{};
    /// When `found` is empty: held while compiling and storing, then destroyed. Null when the
    /// cache does not coordinate compiles (or gave up waiting): compile without a lease.
    std::unique_ptr<CompileLease> lease{};
    /// The caller's CancellationToken was cancelled before or while it waited: nothing found, no
    /// lease held; the caller gives up (compile_cached throws CompileCancelled).
    bool cancelled = false;
};

/// The interface of program caches: get, put, stats, clear.
class ProgramCache {
public:
    virtual ~ProgramCache();

    /// The code stored under `key`, or nullopt when there is none (or it was corrupt).
    virtual std::optional<ObjectCode> get(const CacheKey& key) = 0;
    /// Stores `code` under `key`, replacing what was there, then evicts least recently used
    /// entries until the cache is within its byte bound (an entry larger than the bound is not
    /// kept). Throws CacheError when the store fails (a disk cache's I/O error).
    virtual void put(const CacheKey& key, const ObjectCode& code) = 0;
    /// Stores every entry of `entries` as put() does. The default puts them one by one; a cache
    /// may store them faster together (a DiskProgramCache flushes them to disk once, not once
    /// each). Throws CacheError at the first failure, when the entries before it may be stored
    /// and those after it are not. Thread-safe in every cudacore cache.
    virtual void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries);
    /// Stores `entries` as put_many() does, each remembering `trust`: whom it came from when this
    /// user's processes did not compile it (import_cache_artefact passes an artefact's: "unsigned
    /// cache artefact", or the trust of the secret that signed it, named as
    /// RemoteProgramCache::entry_trust() names that secret's). get() serves such an entry like any
    /// other; get_with_trust() says its trust, and a TieredProgramCache serves it from a tier of
    /// the user's own only while it accepts that trust (tiered_program_cache.hpp). A later put()
    /// of the key stores it as compiled here. The default forgets the trust and calls put_many()
    /// (a shared cache seals what it stores by its own rules). Throws as put_many() does.
    virtual void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                     const std::string& trust);
    /// get(key), and `trust` set to the trust its entry was stored with (put_many_with_trust), or
    /// empty for one stored by put(). The default: get(key), trust empty. Thread-safe as get() is.
    virtual std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust);
    /// This cache's counters and size (see CacheStats). Thread-safe in every cudacore cache.
    virtual CacheStats stats() const = 0;
    /// Removes every entry.
    virtual void clear() = 0;

    /// Called by get_or_compile() and compile_cached() after a miss, before compiling `key`, so
    /// that caches shared by many processes (RemoteProgramCache) have each key compiled once:
    /// either this caller gets the lease (compiles, stores, then drops the lease), or it waits
    /// until `find` (a lookup through the whole cache the caller compiles into) returns the
    /// entry another process stored, or until the cache's wait bound has passed (then it compiles
    /// without a lease). The default coordinates nothing: it returns an empty CompileTurn at once
    /// (a process-local cache has no one else to wait for). Never throws CacheError: a cache that
    /// cannot coordinate lets the caller compile. Thread-safe.
    virtual CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find);
    /// await_compile_turn, giving up when `cancellation` is cancelled: a cache that waits for
    /// another process checks the token at least every 10 ms while it waits and then returns
    /// with `cancelled` set, holding no lease (RemoteProgramCache, TieredProgramCache). The
    /// default returns `cancelled` when the token is cancelled already, else calls the
    /// two-argument form (a cache that overrides only that one waits as it always did).
    /// compile_cached() calls this form with CompileOptions::cancellation. Never throws
    /// CacheError. Thread-safe.
    virtual CompileTurn await_compile_turn(const CacheKey& key,
                                           const std::function<std::optional<ObjectCode>()>& find,
                                           const CancellationToken& cancellation);

    /// Whom this cache's entries come from, for a TieredProgramCache that copies them into the
    /// tiers above it (tiered_program_cache.hpp): empty (the default) for a cache that holds only
    /// what its user's own processes stored (memory, disk); otherwise a label that changes
    /// whenever what the cache accepts from others changes (a RemoteProgramCache's names its seal:
    /// SHA-256, or HMAC-SHA-256 under a fingerprint of its secret). A cache that wraps a shared
    /// one must return the wrapped cache's. Thread-safe.
    virtual std::string entry_trust() const;

    /// The keys of every entry this cache holds now, in no particular order, for exporting it
    /// (export_cache_artefact in cache_artefact.hpp); nullopt (the default) for a cache that
    /// cannot list its entries (a RemoteProgramCache: a shared server is not walked key by key).
    /// Entries stored or evicted by others meanwhile may or may not be listed. Throws CacheError
    /// when the listing fails (a disk cache's folder cannot be read). Thread-safe.
    virtual std::optional<std::vector<CacheKey>> entry_keys() const;
};

}  // namespace cudacore
