/// @file
/// DiskProgramCache: a ProgramCache in a directory of the user's alone (mode 0700), shared by the
/// user's processes, bounded in bytes. The promises: docs/caching.md, "What the disk cache
/// promises"; the layout and locks: docs/design/cache-layout.md.
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

/// A program cache on disk, bounded by size: never a wrong or partial entry (a bad one is a miss,
/// counted and removed); least recently used entries go past max_bytes; only the cache's own
/// names are removed; damaged bookkeeping is repaired with a warning. Not copyable; thread-safe
/// and multi-process-safe; stats()' hit and miss counters are this object's. Members throw
/// CacheError naming the file and call on an I/O error.
class DiskProgramCache final : public ProgramCache {
public:
    static constexpr std::uint64_t default_max_bytes = std::uint64_t{1} << 30;  ///< 1 GiB
    /// Age after which a temporary file is removed even if its writer's process id lives.
    static constexpr std::chrono::seconds stale_temporary_age{600};

    /// Creates `directory` (mode 0700) when absent and marks it with cudacore's CACHEDIR.TAG;
    /// CacheError when it is not safe (another user's, writable by others, `/`, foreign files).
    explicit DiskProgramCache(std::filesystem::path directory,
                              std::uint64_t max_bytes = default_max_bytes);
    /// The cache at `directory`, creating nothing; nullptr when there is none. Throws as the
    /// constructor, and when the folder lacks cudacore's marker.
    static std::unique_ptr<DiskProgramCache> open_existing(
        std::filesystem::path directory, std::uint64_t max_bytes = default_max_bytes);
    ~DiskProgramCache() override;
    DiskProgramCache(const DiskProgramCache&) = delete;
    DiskProgramCache& operator=(const DiskProgramCache&) = delete;

    /// The code stored under `key`, or nullopt (a bad entry is removed).
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key` (not when larger than max_bytes), then evicts least recently used
    /// entries while over the bound; never throws once the entry is written.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Stores `entries` as put() does, one flush per 128; those stored before an error stay.
    void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) override;
    /// put_many(), each entry file also holding `trust`, which goes wherever the entry goes.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with the trust its entry file holds (empty for one written by put()).
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// This object's counters, with the entries and bytes in the directory.
    CacheStats stats() const override;
    /// Removes every entry, stale temporary file and unused header bundle folder; what cannot be
    /// removed is passed over, then named in a CacheError.
    void clear() override;
    /// The keys of every entry file; a listed entry may be gone before it is read.
    std::optional<std::vector<CacheKey>> entry_keys() const override;
    /// What prune_and_repair did.
    struct PruneReport {
        std::uint64_t removed = 0;            ///< entries removed to meet the bound
        std::vector<std::string> repaired{};  ///< damage found and repaired, naming the path
        /// What could not be repaired or listed, naming the path and call (its entries are kept).
        std::vector<std::string> skipped{};
    };
    /// Repairs the bookkeeping, recounts every shard, removes stale temporary files, then least
    /// recently used entries down to `max_bytes`. CacheError when the cache cannot be used at all.
    PruneReport prune_and_repair(std::uint64_t max_bytes);
    std::uint64_t prune(std::uint64_t max_bytes);  ///< prune_and_repair(max_bytes).removed

    /// The cache's top folder, as given to the constructor.
    const std::filesystem::path& directory() const noexcept { return directory_; }
    /// The byte bound puts keep the cache under.
    std::uint64_t max_bytes() const noexcept { return max_bytes_; }
    /// Where `key`'s entry is stored: directory() / \<its shard\> / entry_name(key).
    std::filesystem::path entry_path(const CacheKey& key) const;
    /// The file name of `key`'s entry: \<64 hex digits\>.ccentry.
    static std::string entry_name(const CacheKey& key);

    /// The bytes of an entry file for `code` under `key` (a header, then the serialized code).
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code);
    /// The code of an entry file's `bytes` for `expected`; SerializationError otherwise.
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected);

private:
    enum class Opening { create, existing };
    void store_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries, const std::string& trust);
    DiskProgramCache(std::filesystem::path directory, std::uint64_t max_bytes, Opening opening);

    std::filesystem::path directory_;
    int directory_fd_ = -1;  ///< the directory as opened and checked; every operation uses it
    std::uint64_t max_bytes_;
    std::atomic<std::uint64_t> hits_{0}, misses_{0}, insertions_{0}, evictions_{0}, corrupt_{0},
        failed_stores_{0};
};

/// $CUDACORE_CACHE_DIR, else $XDG_CACHE_HOME/cudacore, else $HOME/.cache/cudacore. CacheError
/// when none is set, or when CUDACORE_CACHE_DIR is relative.
std::filesystem::path default_cache_directory();

/// Whether CUDACORE_DISABLE_CACHE is set to something other than "" or "0".
bool cache_disabled_by_environment() noexcept;

/// A DiskProgramCache at default_cache_directory(); nullptr when the environment disables it.
std::unique_ptr<ProgramCache> open_default_program_cache(
    std::uint64_t max_bytes = DiskProgramCache::default_max_bytes);

}  // namespace cudacore
