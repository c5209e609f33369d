// DiskProgramCache's get, put and stats. The pieces: disk_program_cache_entry (an entry's name,
// bytes, read and write), disk_shards and disk_shard_repair (the shard folders), shard_counters
// (their sizes), disk_eviction (after a put), disk_program_cache_maintenance (prune, clear),
// disk_program_cache_opening (the directory). docs/design/cache-layout.md has the mechanism.
#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/activity_counters.hpp"
#include "cache/disk/disk_program_cache_entry.hpp"
#include "cache/disk/disk_eviction.hpp"
#include "cache/disk/disk_files.hpp"
#include "cache/disk/disk_shard_repair.hpp"
#include "cache/disk/disk_shards.hpp"
#include "cache/disk/shard_counters.hpp"
#include "support/cudacore_trace.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <system_error>

namespace cudacore {

namespace detail::disk {
namespace {

// The disk tier's counters in cache_stats(), under "disk".
constinit CacheTier disk_tier{"disk"};

// A get that throws (the shard cannot be opened) is a failure in cache_stats().
struct CountGetFailure {
    int before = std::uncaught_exceptions();
    ~CountGetFailure() {
        if (std::uncaught_exceptions() > before)
            disk_tier.count(TierEvent::failure);
    }
};

}  // namespace
}  // namespace detail::disk

std::string DiskProgramCache::entry_name(const CacheKey& key) {
    return key.hex() + std::string(detail::disk::entry_extension);
}

std::filesystem::path DiskProgramCache::entry_path(const CacheKey& key) const {
    return directory_ / detail::shard_folder_name(detail::disk::shard_of(key)) / entry_name(key);
}

std::optional<ObjectCode> DiskProgramCache::get(const CacheKey& key) {
    std::string trust;
    return get_with_trust(key, trust);
}

std::optional<ObjectCode> DiskProgramCache::get_with_trust(const CacheKey& key, std::string& trust) {
    namespace disk = detail::disk;
    using Outcome = disk::EntryRead::Outcome;
    using detail::TierEvent;
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get disk");
    const disk::CountGetFailure count_failure;
    const unsigned shard = disk::shard_of(key);
    const std::string name = entry_name(key);
    disk::FileDescriptor folder(disk::open_shard(directory_fd_, shard, false));
    // Something other than a folder where the shard belongs is a miss: the next put there
    // replaces it.
    if (folder.fd < 0 && errno != ENOENT && !disk::not_a_folder(errno))
        disk::fail("open", disk::shard_path(directory_, shard), errno);
    disk::FileDescriptor file;
    disk::EntryRead read;
    if (folder.fd >= 0)
        read = disk::read_entry(folder.fd, name, entry_path(key), key, max_bytes_, file);
    if (read.outcome == Outcome::hit) {
        ::futimens(file.fd, nullptr);  // recently used; a failure only blurs eviction's order
        ++hits_;
        disk::disk_tier.count(TierEvent::hit);
        trust = std::move(read.trust);
        return std::move(read.code);
    }
    if (read.outcome == Outcome::corrupt) {
        disk::remove_corrupt_entry(directory_fd_, directory_, shard, folder.fd, name, read,
                                   file.fd);
        ++corrupt_;
        disk::disk_tier.count(TierEvent::failure);
    }
    ++misses_;
    disk::disk_tier.count(TierEvent::miss);
    trust.clear();
    return std::nullopt;
}

void DiskProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put disk");
    const std::string bytes = encode_entry(key, code);
    if (bytes.size() > max_bytes_) return;  // would never fit
    const unsigned shard = detail::disk::shard_of(key);
    bool written = false;  // the entry is in place: nothing after that fails the put
    try {
        detail::disk::store_entry(directory_fd_, directory_, shard, entry_name(key), bytes,
                                  entry_path(key), written);
    } catch (const std::exception& e) {
        if (!written) {
            if (dynamic_cast<const std::system_error*>(&e) == nullptr &&
                dynamic_cast<const CacheError*>(&e) == nullptr)
                throw;
            ++failed_stores_;
            detail::disk::disk_tier.count(detail::TierEvent::failure);
            throw CacheError("DiskProgramCache::put of '" + code.name() + "' (" +
                             std::string(to_string(code.code_type())) + ", " +
                             std::to_string(bytes.size()) + " bytes) as " + key.hex() + ": " +
                             e.what());
        }
        // Stored, but its counter could not be written back: it stays dirty, and the next
        // holder of its lock recounts the shard.
        warn(WarningKind::disk_cache_repaired,
             "DiskProgramCache: counting entry " + key.hex() + " in '" +
                 detail::disk::shard_path(directory_, shard).string() +
                 "' failed (recounted later): " + e.what());
    }
    ++insertions_;
    detail::disk::disk_tier.count(detail::TierEvent::store);
    try {
        evictions_ += detail::disk::evict_after_put(directory_fd_, directory_, max_bytes_);
    } catch (...) {
        // Reported by evict_after_put where it could be; the entry is stored.
    }
}

void DiskProgramCache::put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) {
    store_many(entries, {});
}

void DiskProgramCache::put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                           const std::string& trust) {
    store_many(entries, trust);
}

void DiskProgramCache::store_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                  const std::string& trust) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put_many disk");
    constexpr std::size_t batch = 128;  // a descriptor each while its batch is written
    // The encoded copies of a batch are held until it is written: bounded in bytes too, so that
    // storing large entries (an artefact's import) adds one batch's memory, not theirs all.
    constexpr std::uint64_t batch_bytes = std::uint64_t{64} << 20;
    std::vector<detail::disk::EncodedEntry> encoded;
    std::uint64_t encoded_bytes = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& [key, code] = entries[i];
        std::string bytes = detail::disk::encode_entry(key, code, trust);
        if (bytes.size() <= max_bytes_) {  // else it would never fit
            encoded_bytes += bytes.size();
            encoded.push_back({detail::disk::shard_of(key), entry_name(key), std::move(bytes), entry_path(key)});
        }
        if (encoded.size() < batch && encoded_bytes < batch_bytes && i + 1 < entries.size()) continue;
        std::size_t stored = 0;
        try {
            stored = detail::disk::store_entries(directory_fd_, directory_, encoded);
        } catch (const std::exception& e) {
            if (dynamic_cast<const std::system_error*>(&e) == nullptr &&
                dynamic_cast<const CacheError*>(&e) == nullptr)
                throw;
            ++failed_stores_;
            detail::disk::disk_tier.count(detail::TierEvent::failure);
            throw CacheError("DiskProgramCache::put_many of " + std::to_string(entries.size()) +
                             " entries into '" + directory_.string() + "': " + e.what());
        }
        insertions_ += stored;
        for (std::size_t n = 0; n < stored; ++n)
            detail::disk::disk_tier.count(detail::TierEvent::store);
        encoded.clear();
        encoded_bytes = 0;
    }
    // The renames durable, once for all; a failure leaves correct files (as put's fsync).
    ::syncfs(directory_fd_);
    try {
        evictions_ += detail::disk::evict_after_put(directory_fd_, directory_, max_bytes_);
    } catch (...) {
        // Reported by evict_after_put where it could be; the entries are stored.
    }
}

CacheStats DiskProgramCache::stats() const {
    namespace disk = detail::disk;
    CacheStats stats;
    stats.hits = hits_;
    stats.misses = misses_;
    stats.insertions = insertions_;
    stats.evictions = evictions_;
    stats.corrupt_entries = corrupt_;
    stats.failed_stores = failed_stores_;
    stats.max_bytes = max_bytes_;
    // Temporary files in the top folder, and shard names that hold something other than a
    // folder (damage: no entries there, whatever their counter says).
    const disk::DirectoryListing listing = disk::list_directory(directory_fd_, directory_, false);
    // The shards' counters; a dirty or impossible one is recounted (and repaired, where the
    // cache can be written) first. Without a counters file (looked at by maintenance, or one
    // whose file was dropped), shard folders that exist are counted from listings, and nothing
    // is created.
    const std::optional<detail::ShardTable> table =
        detail::read_shard_table(directory_fd_, directory_);
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        if (listing.not_folders[shard]) continue;
        detail::ShardCounter counter =
            table ? (*table)[shard] : detail::ShardCounter{0, 0, 0, false};
        if (!counter.clean)
            counter = disk::recount_shard(directory_fd_, directory_, shard, table.has_value());
        stats.entries = detail::saturating_add(stats.entries, counter.entries);
        stats.bytes = detail::saturating_add(stats.bytes, counter.bytes);
    }
    stats.temporary_files = listing.temporary_files;
    stats.bytes = detail::saturating_add(stats.bytes, listing.temporary_bytes);
    return stats;
}

std::optional<std::vector<CacheKey>> DiskProgramCache::entry_keys() const {
    namespace disk = detail::disk;
    std::vector<CacheKey> keys;
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        disk::FileDescriptor folder(disk::open_shard(directory_fd_, shard, false));
        if (folder.fd < 0) {
            // No folder yet, or something else under its name (replaced by the next put): empty.
            if (errno == ENOENT || disk::not_a_folder(errno)) continue;
            disk::fail("open", disk::shard_path(directory_, shard), errno);
        }
        const disk::DirectoryListing listing =
            disk::list_directory(folder.fd, disk::shard_path(directory_, shard), false);
        for (const disk::EntryFile& entry : listing.entries) {
            const std::string_view name = entry.name;
            keys.push_back(CacheKey::from_hex(name.substr(0, name.size() - disk::entry_extension.size())));
        }
    }
    return keys;
}

}  // namespace cudacore
