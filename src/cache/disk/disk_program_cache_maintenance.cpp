// DiskProgramCache's maintenance: prune_and_repair (every shard recounted and repaired, then
// least recently used entries removed, ranked over the whole cache) and clear.
#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"

#include "cache/disk/disk_files.hpp"
#include "cache/disk/disk_shard_repair.hpp"
#include "cache/disk/disk_shards.hpp"
#include "cache/disk/shard_counters.hpp"
#include "support/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <bitset>
#include <cerrno>
#include <utility>
#include <vector>

namespace cudacore {

namespace detail::disk {
namespace {

namespace fs = std::filesystem;

// One prune_and_repair: what it repaired and skipped, and the entries it found.
class Pruning {
public:
    Pruning(int directory_fd, const fs::path& directory, DiskProgramCache::PruneReport& report)
        : directory_fd_(directory_fd), directory_(directory), report_(report) {}

    // The counters file whole again (missing, cut short, not a regular file).
    void repair_counters_file() {
        const fs::path path = directory_ / shard_counters_name;
        struct stat info {};
        const std::string counters(shard_counters_name);
        if (::fstatat(directory_fd_, counters.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) fail("fstatat", path, errno);
            ensure_shard_table(directory_fd_, directory_);
            repaired(quoted(path) + " was missing: made again, every shard recounted");
        } else if (!S_ISREG(info.st_mode)) {
            ensure_shard_table(directory_fd_, directory_);  // throws if it cannot
            repaired(quoted(path) + " was " + std::string(file_kind(info.st_mode)) +
                     ": replaced, every shard recounted");
        } else if (static_cast<std::uint64_t>(info.st_size) < shard_table_bytes) {
            ensure_shard_table(directory_fd_, directory_);
            repaired(quoted(path) + " was cut short: made whole, every shard recounted");
        }
    }

    // Every shard recounted (its counter repaired, stale temporaries removed), and the age and
    // size of every entry gathered (16 bytes an entry) to find the age below which entries go.
    // A shard that cannot be listed is skipped and named: its entries are neither counted nor
    // removed, its counter is left as it is. Returns the bytes of the shards counted.
    std::uint64_t recount_every_shard() {
        std::uint64_t total = 0;
        for (unsigned shard = 0; shard < shard_count; ++shard) {
            ShardLock lock(directory_fd_, directory_, shard);
            FileDescriptor folder(open_to_recount(shard, lock));
            if (folder.fd < 0) continue;
            lock.write(lock.read(), true);
            DirectoryListing listing;
            try {
                listing = list_directory(folder.fd, shard_path(directory_, shard), true);
            } catch (const CacheError& e) {
                skip(shard, e.what());  // left dirty: recounted by its next holder
                continue;
            }
            const ShardCounter counter = count_listing(listing);
            for (const auto& entry : listing.entries)
                ages_.emplace_back(nanoseconds(entry.modified), entry.size);
            total = saturating_add(total, counter.bytes);
            lock.write(counter, false);
            usable_.set(shard);
        }
        return total;
    }

    // Removes the least recently used entries of the shards counted by recount_every_shard until
    // the `total` bytes found there are at most `max_bytes`; returns how many were removed.
    std::uint64_t remove_least_recently_used(std::uint64_t total, std::uint64_t max_bytes) {
        std::sort(ages_.begin(), ages_.end());
        // Entries used before `cutoff` go, and `at_cutoff` of those used at that very instant.
        std::int64_t cutoff = 0;
        std::uint64_t at_cutoff = 0, left = total;
        for (const auto& [age, size] : ages_) {
            if (left <= max_bytes) break;
            if (age != cutoff) at_cutoff = 0;
            cutoff = age;
            ++at_cutoff;
            left -= std::min(left, size);
        }
        std::uint64_t removed = 0;
        for (unsigned shard = 0; shard < shard_count; ++shard) {
            if (usable_[shard]) removed += remove_used_before(shard, cutoff, at_cutoff);
        }
        return removed;
    }

    void note(const ShardRepair& repair) {
        if (!repair.damaged) return;
        (repair.removed ? report_.repaired : report_.skipped).push_back(repair.message);
    }

private:
    void repaired(std::string what) { report_.repaired.push_back(std::move(what)); }

    void skip(unsigned shard, const std::string& why) {
        report_.skipped.push_back(quoted(shard_path(directory_, shard)) +
                                  " cannot be listed (" + why +
                                  "): skipped, its entries neither counted nor removed");
    }

    // The shard's folder under `lock`, or -1 when it has none (its counter then set to empty).
    int open_to_recount(unsigned shard, ShardLock& lock) {
        const int fd = open_shard(directory_fd_, shard, false);
        if (fd >= 0) return fd;
        const int error = errno;
        if (not_a_folder(error)) {
            note(remove_non_folder(directory_fd_, directory_, shard, lock));
            lock.write({}, false);
        } else if (error == ENOENT) {
            lock.write({}, false);
        } else {
            skip(shard, "open: " + errno_text(error));
        }
        return -1;
    }

    // Removes the entries of `shard` used before `cutoff`, and `at_cutoff` of those used then
    // (decremented), under its lock; recounts the shard. One that cannot be listed is skipped.
    std::uint64_t remove_used_before(unsigned shard, std::int64_t cutoff,
                                     std::uint64_t& at_cutoff) {
        ShardLock lock(directory_fd_, directory_, shard);
        FileDescriptor folder(open_shard(directory_fd_, shard, false));
        if (folder.fd < 0) {
            if (errno == ENOENT || not_a_folder(errno)) lock.write({}, false);  // damaged since
            return 0;
        }
        lock.write(lock.read(), true);
        const fs::path path = shard_path(directory_, shard);
        std::uint64_t removed = 0;
        try {
            DirectoryListing listing = list_directory(folder.fd, path, true);
            std::sort(listing.entries.begin(), listing.entries.end(), older);
            for (const auto& entry : listing.entries) {
                const std::int64_t age = nanoseconds(entry.modified);
                if (age > cutoff || (age == cutoff && at_cutoff == 0)) break;
                if (age == cutoff) --at_cutoff;
                if (::unlinkat(folder.fd, entry.name.c_str(), 0) == 0) ++removed;
            }
            lock.write(count_listing(list_directory(folder.fd, path, false)), false);
        } catch (const CacheError& e) {
            skip(shard, e.what());
        }
        return removed;
    }

    int directory_fd_;
    const fs::path& directory_;
    DiskProgramCache::PruneReport& report_;
    std::vector<std::pair<std::int64_t, std::uint64_t>> ages_;  // of the entries counted
    std::bitset<shard_count> usable_;                            // shards counted
};

// Removes every entry of `shard` (and its stale temporaries) under its lock; something other
// than a folder under its name is replaced by an empty one. Throws CacheError.
void clear_shard(int directory_fd, const fs::path& directory, unsigned shard) {
    FileDescriptor folder(open_shard(directory_fd, shard, false));
    if (folder.fd < 0) {
        if (not_a_folder(errno)) {  // damage: replaced, and the shard counted empty
            ShardLock lock(directory_fd, directory, shard);
            warn_repair(remove_non_folder(directory_fd, directory, shard, lock));
        }
        return;
    }
    const fs::path path = shard_path(directory, shard);
    change_shard(directory_fd, directory, shard, folder.fd, [&](ShardCounter& counter) {
        const DirectoryListing listing = list_directory(folder.fd, path, true);
        for (const auto& entry : listing.entries) ::unlinkat(folder.fd, entry.name.c_str(), 0);
        counter = count_listing(list_directory(folder.fd, path, false));
    });
}

}  // namespace
}  // namespace detail::disk

std::uint64_t DiskProgramCache::prune(std::uint64_t max_bytes) {
    return prune_and_repair(max_bytes).removed;
}

DiskProgramCache::PruneReport DiskProgramCache::prune_and_repair(std::uint64_t max_bytes) {
    namespace disk = detail::disk;
    PruneReport report;
    disk::Pruning pruning(directory_fd_, directory_, report);
    pruning.repair_counters_file();
    // Shard names that hold something other than a folder, replaced by empty folders.
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        struct stat info {};
        const std::string name(detail::shard_folder_name(shard));
        if (::fstatat(directory_fd_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            S_ISDIR(info.st_mode))
            continue;
        detail::ShardLock lock(directory_fd_, directory_, shard);
        pruning.note(disk::remove_non_folder(directory_fd_, directory_, shard, lock));
    }
    // Stale temporary files of the top folder (the marker's writes).
    disk::list_directory(directory_fd_, directory_, true);
    const std::uint64_t total = pruning.recount_every_shard();
    if (total <= max_bytes) return report;
    report.removed = pruning.remove_least_recently_used(total, max_bytes);
    evictions_ += report.removed;
    return report;
}

void DiskProgramCache::clear() {
    namespace disk = detail::disk;
    // What could not be removed: named at the end, after everything else is removed.
    std::vector<std::string> left;
    auto going_on = [&](auto&& step) {
        try {
            step();
        } catch (const CacheError& e) {
            left.push_back(e.what());
        }
    };
    // Stale temporary files of the top folder (the marker's writes).
    going_on([&] { disk::list_directory(directory_fd_, directory_, true); });
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        going_on([&] { disk::clear_shard(directory_fd_, directory_, shard); });
    }
    going_on([&] {
        HeaderBundle::FolderRemoval folders = HeaderBundle::remove_folders(directory_);
        for (std::string& line : folders.left) left.push_back(std::move(line));
    });
    if (left.empty()) return;
    std::string message = "DiskProgramCache::clear of '" + directory_.string() + "' left what it could not remove:";
    for (const std::string& line : left) message += "\n  " + line;
    throw CacheError(message);
}

}  // namespace cudacore
