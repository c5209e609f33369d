/// @file
/// DiskProgramCache: a ProgramCache in a directory, shared by the processes of one user, bounded
/// in bytes. How it lays out, locks, counts, evicts and repairs its files is described in
/// docs/design/cache-layout.md; this header is the contract.
///
/// What it promises:
/// - Never a wrong or partial entry: an entry is checked against its key and checksum on every
///   read; a bad one (wrong magic or key, failed checksum, truncated, not a regular file) is a
///   miss, counted in stats().corrupt_entries, and removed. A writer killed at any instant
///   leaves no partial entry; of several concurrent writers of one key the last wins, and every
///   version is complete.
/// - Bounded: after a put, least recently used entries (a hit counts as a use) are removed until
///   the cache holds at most max_bytes; while processes store, it may exceed its bound by one
///   entry per storing process. No get or put costs more with the number of entries.
/// - Private: cached code runs on your GPU, so the directory must be yours alone. It is created
///   with mode 0700; one owned by another user, writable by group or others, a symbolic link, or
///   `/` is refused with CacheError. Replacing the path (or a part of the cache) with a symbolic
///   link after the check redirects nothing.
/// - Only the cache's own names are ever removed (entries, the temporary files of its writes);
///   anything else in the folder is left alone.
/// - Damage to its bookkeeping (files dropped by sync and backup tools, edited or moved by
///   people) is detected and repaired, reported as a WarningKind::disk_cache_repaired warning,
///   and never fails a put that wrote its entry.
///
/// Thread-safe and multi-process-safe; the hit/miss counters in stats() are this object's.
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

    /// Creates `directory` (mode 0700; missing parents with the default mode) when absent, and
    /// marks it as cudacore's with a CACHEDIR.TAG (the Cache Directory Tagging format). Throws
    /// CacheError when it cannot be created, is not a directory, is owned by another user, is
    /// writable by group or others, is the root directory, or is not a cache: an existing folder
    /// without cudacore's marker is taken (and marked) only when it holds nothing but names the
    /// cache writes (shard folders, their counters, temporary files, .lock), as caches made
    /// before the marker do. Makes the shards' counters file whole when it is missing or damaged.
    explicit DiskProgramCache(std::filesystem::path directory,
                              std::uint64_t max_bytes = default_max_bytes);
    /// For maintenance (`cudacore cache clear|prune|stats`): the cache at `directory`, never
    /// creating or marking anything. nullptr when `directory` does not exist or holds nothing but
    /// header bundle folders (HeaderBundle::folder(): no compile went through a cache yet); throws CacheError as
    /// the constructor does, and also when the folder does not carry cudacore's marker.
    static std::unique_ptr<DiskProgramCache> open_existing(
        std::filesystem::path directory, std::uint64_t max_bytes = default_max_bytes);
    ~DiskProgramCache() override;
    DiskProgramCache(const DiskProgramCache&) = delete;
    DiskProgramCache& operator=(const DiskProgramCache&) = delete;

    /// The code stored under `key`, or nullopt (a miss). A hit marks the entry as recently used.
    /// An entry larger than this cache writes (max_bytes, or the format's limit) is a miss
    /// refused before it is read, and so is a read that runs out of memory; a bad entry is a
    /// miss and removed. Throws CacheError on an I/O error other than the entry being absent or
    /// bad (counted as a failure in cache_stats()).
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key` (an entry larger than max_bytes is not stored), then evicts
    /// least recently used entries while the cache is over its bound. Throws CacheError naming
    /// the file and the failing call on an I/O error (full disk,
    /// read-only directory, a directory where the entry belongs...), counted in
    /// stats().failed_stores; compile_cached reports it and goes on without the cache. Never
    /// throws once the entry is written: a failure to count it leaves its shard's counter dirty
    /// (recounted later), and a failure to evict skips that shard; both are warnings
    /// (WarningKind::disk_cache_repaired).
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Stores `entries` as put() does, with one flush to disk for every 128 of them (their files
    /// written, the file system synced once, then each renamed into place) and one after the
    /// last, not two per entry: how an import of thousands of entries stays fast. Entries larger than max_bytes
    /// are not stored. Throws CacheError naming the failing call; entries renamed into place
    /// before it stay stored.
    void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) override;
    /// put_many(), each entry file also holding `trust` (ProgramCache::put_many_with_trust), so
    /// that the trust goes wherever the entry goes (evicted, read by another process) and a put()
    /// of its key replaces it with an entry compiled here.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with the trust its entry file holds (empty for one written by put()).
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// Counters of this object, plus the entries and bytes in the directory, from the shards'
    /// counters (one read of \<dir\>/.shards) and a listing of the top folder (about 260 names),
    /// so it stays fast at millions of entries. Exact
    /// when no process is storing or evicting, except after changes made behind the cache's back
    /// (files removed or copied in by hand, a power loss between an entry's write and its count):
    /// a dirty or impossible counter (a process killed while changing its shard, damage) is
    /// recounted and repaired first, or only recounted where the cache cannot be written;
    /// prune() recounts every shard. temporary_files counts those of the top folder only
    /// (a shard's are not listed). Throws CacheError on an I/O error.
    CacheStats stats() const override;
    /// Removes every entry (and stale temporary files). Only names of the cache's own forms are
    /// ever removed (<64 hex digits>.ccentry and the temporary files of its writes); anything else
    /// in the folder is left alone. Something other than a folder under a shard's name is
    /// replaced by an empty folder (a warning). Also removes the header bundle folders kept
    /// under the folder (HeaderBundle::remove_folders: those no compile is reading). What cannot
    /// be removed (a shard that cannot be locked or listed, a bundle folder whose lock cannot be
    /// opened: an I/O error) is passed over and the rest removed; then a CacheError names each
    /// such path with the failing call and the error.
    void clear() override;
    /// The keys of every entry file in the shard folders (<64 hex digits>.ccentry; temporary
    /// files and other names are not listed), one listing per shard: 256 folder reads, and 32
    /// bytes an entry. A listed entry may still be removed (evicted, found corrupt) before it is
    /// read. Throws CacheError naming the folder when a shard cannot be opened or listed.
    std::optional<std::vector<CacheKey>> entry_keys() const override;
    /// What prune_and_repair did.
    struct PruneReport {
        std::uint64_t removed = 0;            ///< entries removed to meet the bound
        std::vector<std::string> repaired{};  ///< damage found and repaired, naming the path
        /// What could not be repaired or listed, naming the path and the failing call; a shard
        /// skipped here keeps its entries, uncounted by this prune and not removed.
        std::vector<std::string> skipped{};
    };
    /// Repairs the cache's bookkeeping (a counters file missing, cut short or not a regular file
    /// is made again; something other than a folder under a shard's name is replaced by an
    /// empty folder), recounts every shard (repairing its counter) and removes stale temporary
    /// files, then removes least recently
    /// used entries, ranked over the whole cache, until the total is at most `max_bytes`. A
    /// shard that cannot be listed (a folder without read permission...) is skipped and named,
    /// not an error. Lists the cache twice and holds 16 bytes per entry meanwhile (a maintenance
    /// command's cost). Throws CacheError when the cache cannot be used at all (its counters
    /// cannot be opened or locked, its top folder cannot be listed).
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
/// $HOME/.cache/cudacore (empty values are ignored, and relative XDG_CACHE_HOME / HOME values too,
/// as the XDG spec asks). Throws CacheError when none of them is set, or when CUDACORE_CACHE_DIR
/// is a relative path (refused rather than ignored: it names this cache explicitly).
std::filesystem::path default_cache_directory();

/// Whether CUDACORE_DISABLE_CACHE is set to something other than "" or "0".
bool cache_disabled_by_environment() noexcept;

/// A DiskProgramCache at default_cache_directory(), or nullptr when the environment disables
/// caching. Throws what the DiskProgramCache constructor throws.
std::unique_ptr<ProgramCache> open_default_program_cache(
    std::uint64_t max_bytes = DiskProgramCache::default_max_bytes);

}  // namespace cudacore
