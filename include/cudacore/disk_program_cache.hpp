/// @file
/// DiskProgramCache: a ProgramCache in a directory, shared by the processes of one user.
///
/// Layout. One file per entry, \<dir\>/\<first two hex digits of the key\>/\<key hex\>.ccentry: 256
/// shard folders (00 ... ff, each created with its first entry), as ccache spreads its entries,
/// so that no folder grows past about a 256th of the cache. An entry is a small header (magic, the key) followed by the serialized
/// ObjectCode, whose checksum is verified on every read. An entry file larger than the largest
/// this cache writes (max_bytes, and the format's own limit) is a miss refused before it is read;
/// one too large for any cache is removed as corrupt. A read that runs out of memory is a miss
/// too. The folder carries a CACHEDIR.TAG of cudacore's, and only cudacore's own names in it are
/// ever removed. Writes go to a temporary file in the shard folder that is fsynced and renamed
/// into place, so readers (and a writer killed at any instant) never see a partial entry; the
/// last of several concurrent writers of one key wins, and every version is complete. A bad entry
/// (wrong magic or key, failed checksum, truncated) counts as a miss, is removed and is never
/// returned.
///
/// Older caches. Entries of the flat layout (\<dir\>/\<key hex\>.ccentry, written by cudacore before
/// the shards, or by an older version sharing the cache) are moved into their shards when the
/// cache is opened by the constructor, and by prune(); one written after that is still found by
/// get() (and moved into its shard then), counted by stats(), removed by clear() and prune().
///
/// Size accounting. Each shard's bytes and entries are kept in \<dir\>/.shards, one 64-byte text
/// line per shard, changed only under a lock on that line (so processes store into different
/// shards at once). The line is marked dirty while its shard changes: a process killed at any
/// point leaves it dirty, and the next process that takes that shard's lock (a put, an eviction,
/// stats(), prune()) recounts the shard from a listing of its folder alone. A put or get never
/// lists the whole cache: its cost does not grow with the number of entries.
///
/// Damage to this bookkeeping (sync and backup tools drop dot files; people edit and move things)
/// is detected and repaired, and never costs the bound or a put that wrote its entry:
/// - a slot that is missing (\<dir\>/.shards deleted or cut short), does not parse, or is
///   impossible (bytes without entries, fewer bytes than its entries' headers or more than they
///   can weigh, more than the file system holds) is dirty: recounted from its shard's folder by
///   the next put (whose eviction pass recounts every such slot it can lock), stats() or
///   prune(); sums of slots saturate. Opening the cache makes a missing or short file whole
///   again, with the slots of shards that have a folder marked dirty, never clean and empty;
/// - a slot that is possible but claims more than the whole bound is listed before any other
///   shard gives way to it; one clean and empty over a shard that holds entries (an older
///   version's zeros) is recounted by the next put into that shard; a change whose count went
///   to a .shards deleted meanwhile marks its slot dirty in the new one;
/// - something other than a folder under a shard's name (a file, a symbolic link, never
///   followed) holds no entries: a put, an eviction, clear() and prune() replace it by an empty
///   folder, a get is a miss, stats() counts it empty; each repair is reported as a
///   WarningKind::disk_cache_repaired warning naming the path;
/// - \<dir\>/.shards or \<dir\>/.lock that is not a regular file (a directory, a symbolic link,
///   a FIFO) is removed and made again (a directory only when empty);
/// - a shard that cannot be listed (a folder without read permission) is skipped and named by
///   eviction and prune(), which go on with the others;
/// - a cache that cannot be written (read-only) is counted by stats() without repairing.
///
/// Bounded in bytes: after a put, while the counters add up to more than max_bytes, entries are
/// removed least recently used first (oldest modification time; a hit touches the file) from the
/// shard whose least recently used entry is the oldest (each shard's line records it as of its
/// last listing, and the listing checks it). One eviction lists one shard and removes at least a
/// tenth of it, so its cost is shared by the puts that follow; recency is thus followed exactly
/// across shards and to within a tenth of a shard inside one. prune() ranks all entries at once.
/// An entry being written is not counted until it is renamed into place: while processes store,
/// the cache may exceed its bound by one entry per storing process. A temporary file's name
/// carries its writer's process id: a shard's eviction, prune and clear remove those whose writer
/// is gone, and any older than stale_temporary_age (a reused pid).
///
/// Security: cached code runs on your GPU, so the directory must be yours alone. It is created
/// with mode 0700 (its shard folders too); an existing directory that is owned by another user or
/// writable by group or others, or that is a symbolic link, is refused with CacheError. The
/// directory is opened once (O_DIRECTORY | O_NOFOLLOW), the check is made on that descriptor, and
/// every later operation is relative to it (openat, renameat, unlinkat, fstatat, fdopendir), with
/// shard folders opened through it without following symlinks: replacing a path with a symlink
/// after the check redirects nothing. Entries are opened without following symlinks and without
/// blocking (a FIFO planted where an entry belongs is a miss, not a hang).
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

/// A program cache on disk, shared by processes, bounded by size (layout: this file's description).
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
    /// cache writes (entries, their temporary files, .lock), as caches made before the marker do.
    explicit DiskProgramCache(std::filesystem::path directory,
                              std::uint64_t max_bytes = default_max_bytes);
    /// For maintenance (`cudacore cache clear|prune|stats`): the cache at `directory`, never
    /// creating or marking anything. nullptr when `directory` does not exist; throws CacheError as
    /// the constructor does, and also when the folder does not carry cudacore's marker.
    static std::unique_ptr<DiskProgramCache> open_existing(
        std::filesystem::path directory, std::uint64_t max_bytes = default_max_bytes);
    ~DiskProgramCache() override;
    DiskProgramCache(const DiskProgramCache&) = delete;
    DiskProgramCache& operator=(const DiskProgramCache&) = delete;

    /// Throws CacheError on an I/O error other than the entry being absent or bad.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Throws CacheError naming the file and the failing call on an I/O error (full disk,
    /// read-only directory, a directory where the entry belongs...), counted in
    /// stats().failed_stores; compile_cached reports it and goes on without the cache. Never
    /// throws once the entry is written: a failure to count it leaves its shard's counter dirty
    /// (recounted later), and a failure to evict skips that shard; both are warnings
    /// (WarningKind::disk_cache_repaired).
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Counters of this object, plus the entries and bytes in the directory, from the shards'
    /// counters (one read of \<dir\>/.shards) and a listing of the top folder (about 260 names, plus
    /// entries of the flat layout not yet moved), so it stays fast at millions of entries. Exact
    /// when no process is storing or evicting, except after changes made behind the cache's back
    /// (files removed or copied in by hand, a power loss between an entry's write and its count):
    /// a dirty or impossible counter (a process killed while changing its shard, damage) is
    /// recounted and repaired first, or only recounted where the cache cannot be written;
    /// prune() recounts every shard. temporary_files counts those of the top folder only
    /// (a shard's are not listed). Throws CacheError on an I/O error.
    CacheStats stats() const override;
    /// Removes every entry (and stale temporary files). Only names of the cache's own forms are
    /// ever removed (<64 hex digits>.ccentry and the temporary files of its writes); anything else
    /// in the folder is left alone.
    void clear() override;
    /// What prune_and_repair did.
    struct PruneReport {
        std::uint64_t removed = 0;          ///< entries removed to meet the bound
        std::vector<std::string> repaired;  ///< damage found and repaired, naming the path
        /// What could not be repaired or listed, naming the path and the failing call; a shard
        /// skipped here keeps its entries, uncounted by this prune and not removed.
        std::vector<std::string> skipped;
    };
    /// Repairs the cache's bookkeeping (a counters file missing, cut short or not a regular file
    /// is made again; something other than a folder under a shard's name is replaced by an
    /// empty folder), moves entries of the flat layout into their shards, recounts every shard
    /// (repairing its counter) and removes stale temporary files, then removes least recently
    /// used entries, ranked over the whole cache, until the total is at most `max_bytes`. A
    /// shard that cannot be listed (a folder without read permission...) is skipped and named,
    /// not an error. Lists the cache twice and holds 16 bytes per entry meanwhile (a maintenance
    /// command's cost). Throws CacheError when the cache cannot be used at all (its counters
    /// cannot be opened or locked, its top folder cannot be listed).
    PruneReport prune_and_repair(std::uint64_t max_bytes);
    /// prune_and_repair(max_bytes).removed: how many entries were removed.
    std::uint64_t prune(std::uint64_t max_bytes);
    /// How many entries of the flat layout the top folder holds (a listing of it).
    std::uint64_t flat_entries() const;

    /// The cache's top folder, as given to the constructor. Never throws; thread-safe.
    const std::filesystem::path& directory() const noexcept { return directory_; }
    /// The byte bound puts keep the cache under. Never throws; thread-safe.
    std::uint64_t max_bytes() const noexcept { return max_bytes_; }
    /// Where `key`'s entry is stored: directory() / \<its shard\> / entry_name(key).
    std::filesystem::path entry_path(const CacheKey& key) const;
    /// Where the flat layout stored it: directory() / entry_name(key) (still found by get).
    std::filesystem::path flat_entry_path(const CacheKey& key) const;
    /// The file name of `key`'s entry inside its folder.
    static std::string entry_name(const CacheKey& key);

    /// The bytes of an entry file, and their inverse. decode_entry throws SerializationError
    /// unless `bytes` is a valid entry for `expected` (it never reads outside `bytes`).
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code);
    /// The code of an entry file's `bytes`, checked against `expected` (see encode_entry).
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected);

private:
    enum class Opening { create, existing };
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
