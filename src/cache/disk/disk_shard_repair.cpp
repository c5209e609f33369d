#include "cache/disk/disk_shard_repair.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/disk/disk_files.hpp"
#include "cache/disk/disk_shards.hpp"
#include "support/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace cudacore::detail::disk {

namespace fs = std::filesystem;

ShardRepair remove_non_folder(int directory_fd, const fs::path& directory, unsigned shard,
                              ShardLock& lock) {
    const std::string name(shard_folder_name(shard));
    struct stat info {};
    if (::fstatat(directory_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(info.st_mode))
        return {};
    ShardRepair repair;
    repair.damaged = true;
    repair.message = quoted(shard_path(directory, shard)) + " is " +
                     std::string(file_kind(info.st_mode)) + ", not a shard folder";
    if (::unlinkat(directory_fd, name.c_str(), 0) == 0 || errno == ENOENT) {
        repair.removed = true;
        if (::mkdirat(directory_fd, name.c_str(), 0700) != 0 && errno != EEXIST) {
            const std::string error = errno_text(errno);
            repair.message += ": removed; making the folder again failed (mkdirat: " + error +
                              "), it is made with the shard's next entry";
        } else {
            repair.message += ": replaced by an empty shard folder";
        }
    } else {
        const std::string error = errno_text(errno);
        repair.message +=
            ", and removing it failed (unlinkat: " + error + "): the shard is skipped";
    }
    lock.write({}, false);
    return repair;
}

void warn_repair(const ShardRepair& repair) {
    if (repair.damaged)
        warn(WarningKind::disk_cache_repaired, "DiskProgramCache: " + repair.message);
}

int open_locked_shard(int directory_fd, const fs::path& directory, unsigned shard,
                      ShardLock& lock) {
    const int fd = open_shard(directory_fd, shard, false);
    if (fd >= 0) return fd;
    const int error = errno;
    if (not_a_folder(error)) {
        warn_repair(remove_non_folder(directory_fd, directory, shard, lock));
    } else if (error != ENOENT) {
        fail("open", shard_path(directory, shard), error);
    }
    return -1;
}

int open_shard_for_store(int directory_fd, const fs::path& directory, unsigned shard) {
    const int fd = open_shard(directory_fd, shard, true);
    if (fd >= 0 || !not_a_folder(errno)) return fd;
    {
        ShardLock lock(directory_fd, directory, shard);
        warn_repair(remove_non_folder(directory_fd, directory, shard, lock));
    }
    return open_shard(directory_fd, shard, true);
}

ShardCounter recount_shard(int directory_fd, const fs::path& directory, unsigned shard,
                           bool repair) {
    std::optional<ShardLock> lock;
    if (repair) {
        try {
            lock.emplace(directory_fd, directory, shard);
        } catch (const CacheError&) {
            // Read-only (or the counters cannot be locked): counted, not repaired.
        }
    }
    if (lock) {
        const ShardCounter counter = lock->read();
        if (counter.clean) return counter;  // repaired by another process meanwhile
    }
    const fs::path folder_path = shard_path(directory, shard);
    FileDescriptor folder(open_shard(directory_fd, shard, false));
    if (folder.fd < 0 && errno != ENOENT && !not_a_folder(errno)) fail("open", folder_path, errno);
    const ShardCounter counter =
        folder.fd < 0 ? ShardCounter{}
                      : count_listing(list_directory(folder.fd, folder_path, lock.has_value()));
    if (lock) lock->write(counter, false);
    return counter;
}

std::optional<ShardCounter> repair_abandoned_shard(int directory_fd, const fs::path& directory,
                                                   unsigned shard) {
    ShardLock lock(directory_fd, directory, shard, false);
    if (!lock.held()) return std::nullopt;
    ShardCounter counter = lock.read();
    if (counter.clean) return counter;
    FileDescriptor folder(open_locked_shard(directory_fd, directory, shard, lock));
    if (folder.fd < 0) {
        lock.write({}, false);
        return ShardCounter{};
    }
    counter = count_listing(list_directory(folder.fd, shard_path(directory, shard), true));
    lock.write(counter, false);
    return counter;
}

}  // namespace cudacore::detail::disk
