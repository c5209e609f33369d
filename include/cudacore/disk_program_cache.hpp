/// @file
/// DiskProgramCache: a ProgramCache in a directory, shared by the processes of one user, bounded
/// in bytes. Never a wrong or partial entry (a bad one is a miss, counted and removed); least
/// recently used entries go past max_bytes; the directory must be the user's alone (mode 0700);
/// only the cache's own names are ever removed; damaged bookkeeping is repaired with a warning.
/// The promises: docs/caching.md, "What the disk cache promises"; the layout and locks:
/// docs/design/cache-layout.md. Thread-safe and multi-process-safe; the hit/miss counters in
/// stats() are this object's.
#pragma once

#include "cudacore/program_cache.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// A program cache on disk, shared by processes, bounded by size (see this file's description).
/// Not copyable; every member is thread-safe.
class DiskProgramCache final : public ProgramCache {
public:
    static constexpr std::uint64_t default_max_bytes = std::uint64_t{1} << 30;  ///< 1 GiB
    /// Age after which a temporary file is removed even if a process of its writer's id lives.
    static constexpr std::chrono::seconds stale_temporary_age{600};

    /// Creates `directory` (mode 0700) when absent and marks it with cudacore's CACHEDIR.TAG.
    /// Throws CacheError when it cannot be created, is not a directory, is another user's, is
    /// writable by group or others, is `/`, or is an unmarked folder holding other names than the
    /// cache's.
    explicit DiskProgramCache(std::filesystem::path directory,
                              std::uint64_t max_bytes = default_max_bytes);
    /// For maintenance (`cudacore cache clear|prune|stats`): the cache at `directory`, creating
    /// and marking nothing. nullptr when it does not exist or holds only header bundle folders;
    /// throws CacheError as the constructor does, and when the folder lacks cudacore's marker.
    static std::unique_ptr<DiskProgramCache> open_existing(
        std::filesystem::path directory, std::uint64_t max_bytes = default_max_bytes);
    ~DiskProgramCache() override;
    DiskProgramCache(const DiskProgramCache&) = delete;
    DiskProgramCache& operator=(const DiskProgramCache&) = delete;

    /// The code stored under `key`, or nullopt (a miss; also an entry too large to read, a read
    /// out of memory, and a bad entry, which is removed). A hit marks the entry as recently used.
    /// Throws CacheError on another I/O error (counted as a failure in cache_stats()).
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key` (not when larger than max_bytes), then evicts least recently used
    /// entries while over the bound. Throws CacheError naming the file and call on an I/O error
    /// (counted in stats().failed_stores); never once the entry is written.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Stores `entries` as put() does, with one flush to disk per 128 of them. Throws CacheError
    /// naming the failing call; entries renamed into place before it stay stored.
    void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) override;
    /// put_many(), each entry file also holding `trust` (ProgramCache::put_many_with_trust), so
    /// that the trust goes wherever the entry goes (evicted, read by another process) and a put()
    /// of its key replaces it with an entry compiled here.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with the trust its entry file holds (empty for one written by put()).
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// This object's counters, plus the entries and bytes in the directory from the shards'
    /// counters (a dirty or impossible one is recounted first). Exact when no process is storing,
    /// except after changes behind the cache's back; prune() recounts every shard. Throws
    /// CacheError on an I/O error.
    CacheStats stats() const override;
    /// Removes every entry, stale temporary files, and the header bundle folders no compile is
    /// reading; anything not of the cache's own names stays. What cannot be removed is passed
    /// over, then a CacheError names each such path with the failing call and the error.
    void clear() override;
    /// The keys of every entry file in the shard folders (one listing per shard); a listed entry
    /// may be gone before it is read. Throws CacheError naming a shard that cannot be listed.
    std::optional<std::vector<CacheKey>> entry_keys() const override;
    /// What prune_and_repair did.
    struct PruneReport {
        std::uint64_t removed = 0;            ///< entries removed to meet the bound
        std::vector<std::string> repaired{};  ///< damage found and repaired, naming the path
        /// What could not be repaired or listed, naming the path and the failing call; a shard
        /// skipped here keeps its entries, uncounted by this prune and not removed.
        std::vector<std::string> skipped{};
    };
    /// Repairs the bookkeeping, recounts every shard, removes stale temporary files, then removes
    /// least recently used entries until the total is at most `max_bytes`. A shard that cannot be
    /// listed is skipped and named in the report. Throws CacheError when the cache cannot be used
    /// at all (its counters cannot be opened or locked, its top folder cannot be listed).
    PruneReport prune_and_repair(std::uint64_t max_bytes);
    /// prune_and_repair(max_bytes).removed: how many entries were removed.
    std::uint64_t prune(std::uint64_t max_bytes);

    /// The cache's top folder, as given to the constructor. Never throws; thread-safe.
    const std::filesystem::path& directory() const noexcept { return directory_; }
    /// The byte bound puts keep the cache under. Never throws; thread-safe.
    std::uint64_t max_bytes() const noexcept { return max_bytes_; }
    /// Where `key`'s entry is stored: directory() / \<its shard\> / entry_name(key). Throws only
    /// std::bad_alloc.
    std::filesystem::path entry_path(const CacheKey& key) const;
    /// The file name of `key`'s entry inside its shard folder: \<64 hex digits\>.ccentry.
    static std::string entry_name(const CacheKey& key);

    /// The bytes of an entry file for `code` under `key`: a header (magic, the key) followed by
    /// the serialized ObjectCode. decode_entry is its inverse.
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code);
    /// The code of an entry file's `bytes`, checked against `expected` (see encode_entry).
    /// Throws SerializationError unless `bytes` is a valid entry for `expected` (it never reads
    /// outside `bytes`).
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected);

private:
    enum class Opening { create, existing };
    void store_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries, const std::string& trust);
    DiskProgramCache(std::filesystem::path directory, std::uint64_t max_bytes, Opening opening);

    std::filesystem::path directory_;
    int directory_fd_ = -1;  ///< the directory as opened and checked; every operation goes through it
    std::uint64_t max_bytes_;
    std::atomic<std::uint64_t> hits_{0}, misses_{0}, insertions_{0}, evictions_{0}, corrupt_{0},
        failed_stores_{0};
};

/// Where the default cache lives: $CUDACORE_CACHE_DIR, else $XDG_CACHE_HOME/cudacore, else
/// $HOME/.cache/cudacore (empty and relative XDG_CACHE_HOME / HOME are ignored). Throws
/// CacheError when none is set, or when CUDACORE_CACHE_DIR is relative.
std::filesystem::path default_cache_directory();

/// Whether CUDACORE_DISABLE_CACHE is set to something other than "" or "0".
bool cache_disabled_by_environment() noexcept;

/// A DiskProgramCache at default_cache_directory(), or nullptr when the environment disables
/// caching. Throws what the DiskProgramCache constructor throws.
std::unique_ptr<ProgramCache> open_default_program_cache(
    std::uint64_t max_bytes = DiskProgramCache::default_max_bytes);

}  // namespace cudacore
