#include "cache/disk/disk_eviction.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/disk/disk_files.hpp"
#include "cache/disk/disk_shard_repair.hpp"
#include "cache/disk/disk_shards.hpp"

#include <algorithm>
#include <bitset>
#include <exception>
#include <limits>
#include <string>

namespace cudacore::detail::disk {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t no_entry = std::numeric_limits<std::int64_t>::max();

// Removes least recently used entries of one shard (under its counter's lock, from a listing of
// its folder, which also recounts it) while the cache is over `bound`, stopping at an entry used
// more recently than `newer_elsewhere` (another shard has an older one); then goes on until at
// least `at_least` bytes are gone. Records the shard's oldest remaining entry. Returns how many
// entries were removed. Something other than a folder under the shard's name is removed (the
// shard is empty) and reported as a warning.
std::uint64_t evict_from_shard(int directory_fd, const fs::path& directory, unsigned shard,
                               std::uint64_t bound, std::int64_t newer_elsewhere,
                               std::uint64_t at_least) {
    ShardLock lock(directory_fd, directory, shard);
    FileDescriptor folder(open_locked_shard(directory_fd, directory, shard, lock));
    if (folder.fd < 0) {
        lock.write({}, false);  // the folder is gone, and its entries with it
        return 0;
    }
    const ShardTable table = lock.read_all();
    std::uint64_t total = 0;
    for (unsigned other = 0; other < shard_count; ++other)
        if (other != shard) total = saturating_add(total, table[other].bytes);
    lock.write(table[shard], true);
    DirectoryListing listing = list_directory(folder.fd, shard_path(directory, shard), true);
    ShardCounter counter = count_listing(listing);
    total = saturating_add(total, counter.bytes);
    std::sort(listing.entries.begin(), listing.entries.end(), older);
    std::uint64_t removed = 0, removed_bytes = 0;
    std::size_t next = 0;
    if (total > bound) {
        for (; next < listing.entries.size(); ++next) {
            const EntryFile& entry = listing.entries[next];
            if (total > bound) {
                if (nanoseconds(entry.modified) > newer_elsewhere) break;
            } else if (removed_bytes >= at_least) {
                break;
            }
            if (::unlinkat(folder.fd, entry.name.c_str(), 0) == 0) ++removed;
            // Gone either way (a user may have removed it).
            counter.bytes -= entry.size;
            --counter.entries;
            total -= std::min(total, entry.size);
            removed_bytes += entry.size;
        }
    }
    counter.oldest_ns =
        next < listing.entries.size() ? nanoseconds(listing.entries[next].modified) : 0;
    lock.write(counter, false);
    return removed;
}

// One eviction after a put: the shards it listed and skipped, and what it removed.
class Eviction {
public:
    Eviction(int directory_fd, const fs::path& directory, std::uint64_t bound)
        : directory_fd_(directory_fd), directory_(directory), bound_(bound) {}

    // Evicts until the cache is within its bound, or no shard can give way. Throws CacheError
    // when the counters cannot be read; what was removed until then is removed().
    void run() {
        for (int listing = 0; listing < max_listings + static_cast<int>(shard_count); ++listing) {
            auto table = read_shard_table(directory_fd_, directory_);
            if (!table) return;
            if (listing == 0) repair_dirty_counters(*table);
            std::uint64_t total = 0;
            for (const auto& counter : *table) total = saturating_add(total, counter.bytes);
            if (total <= bound_) return;
            const auto [victim, next_oldest] = choose_victim(*table);
            if (victim == shard_count) return;
            // After max_listings, the oldest known shard gives way whatever the others hold.
            const bool last_try = listing + 1 >= max_listings;
            try {
                removed_ += evict_from_shard(
                    directory_fd_, directory_, victim, bound_,
                    last_try ? no_entry : std::max<std::int64_t>(next_oldest, 0),
                    (*table)[victim].bytes / 10);
                listed_.set(victim);
            } catch (const CacheError& e) {
                skip(victim, e);
            }
        }
    }

    std::uint64_t removed() const { return removed_; }

private:
    static constexpr int max_listings = 8;

    // A dirty counter whose lock is free was left by a process killed while changing its shard,
    // or by damage (a missing or impossible slot); one whose lock is held is being changed now.
    // Recounted before it is trusted.
    void repair_dirty_counters(ShardTable& table) {
        for (unsigned shard = 0; shard < shard_count; ++shard) {
            if (table[shard].clean) continue;
            try {
                const auto repaired = repair_abandoned_shard(directory_fd_, directory_, shard);
                if (repaired) {
                    table[shard] = *repaired;
                    listed_.set(shard);
                }
            } catch (const CacheError& e) {
                skip(shard, e);
            }
        }
    }

    // The shard whose least recently used entry is the oldest known, and the next oldest time.
    // Unknown (0) first: a listing tells; a claim of more than the bound before all.
    std::pair<unsigned, std::int64_t> choose_victim(const ShardTable& table) const {
        unsigned victim = shard_count;
        std::int64_t victim_oldest = no_entry, next_oldest = no_entry;
        for (unsigned shard = 0; shard < shard_count; ++shard) {
            const ShardCounter& counter = table[shard];
            // A dirty counter here is being changed by another process now: not waited for.
            if (!counter.clean || counter.entries == 0 || skipped_[shard]) continue;
            const std::int64_t oldest =
                counter.bytes > bound_ && !listed_[shard] ? -1 : counter.oldest_ns;
            if (oldest < victim_oldest) {
                next_oldest = victim_oldest;
                victim = shard;
                victim_oldest = oldest;
            } else if (oldest < next_oldest) {
                next_oldest = oldest;
            }
        }
        return {victim, next_oldest};
    }

    void skip(unsigned shard, const std::exception& e) {
        skipped_.set(shard);
        warn(WarningKind::disk_cache_repaired,
             "DiskProgramCache: evicting from shard " + std::string(shard_folder_name(shard)) +
                 " of '" + directory_.string() + "' failed, the shard is skipped: " + e.what());
    }

    int directory_fd_;
    const fs::path& directory_;
    std::uint64_t bound_;
    std::uint64_t removed_ = 0;
    std::bitset<shard_count> listed_, skipped_;  // by this eviction
};

}  // namespace

std::uint64_t evict_after_put(int directory_fd, const fs::path& directory, std::uint64_t bound) {
    Eviction eviction(directory_fd, directory, bound);
    try {
        eviction.run();
    } catch (const std::exception& e) {
        warn(WarningKind::disk_cache_repaired, "DiskProgramCache: evicting from '" +
                                                   directory.string() + "' failed: " + e.what());
    }
    return eviction.removed();
}

}  // namespace cudacore::detail::disk
