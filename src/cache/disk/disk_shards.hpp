// The disk program cache's shard folders (internal): which shard a key is in, its folder's path,
// opening it, and changing its entries under its counter's lock (shard_counters.hpp holds the
// counters themselves). docs/design/cache-layout.md describes the mechanism.
#pragma once

#include "cudacore/cache_key.hpp"

#include "cache/disk/disk_files.hpp"
#include "cache/disk/shard_counters.hpp"

#include <filesystem>

namespace cudacore::detail::disk {

/// The shard of `key`: its digest's first byte (its hex name's first two digits).
inline unsigned shard_of(const CacheKey& key) { return key.digest[0]; }

/// \<directory\>/\<shard, two hex digits\>.
std::filesystem::path shard_path(const std::filesystem::path& directory, unsigned shard);

/// A shard folder, opened without following a symlink (created first when asked); -1 and errno
/// when it cannot be.
int open_shard(int directory_fd, unsigned shard, bool create);

/// What open_shard's errno says when something other than a folder stands under a shard's name:
/// a file or a FIFO (ENOTDIR), a symbolic link (ENOTDIR or ELOOP: never followed).
bool not_a_folder(int error);

/// A shard's counter as a listing of its folder gives it.
ShardCounter count_listing(const DirectoryListing& listing);

/// Changes a shard's entries with `change` under the lock of its counter, which is marked dirty
/// meanwhile: a process killed inside `change` (or an exception out of it) leaves it dirty, and
/// the next holder recounts the shard. `change` adjusts the counter it is given (recounted first
/// when it was dirty, or when it says the shard is empty and its folder holds an entry: the
/// zeros an older version writes over a dropped .shards, or a table restored from a backup).
/// The counters file deleted or replaced meanwhile (a sync tool, a repair), the new count went
/// to a file no one reads, and a recount made by another process in the new one may have missed
/// the change: the slot is marked dirty there, so that the next holder counts what is now in
/// place. Throws CacheError (and what `change` throws).
template <typename Change>
void change_shard(int directory_fd, const std::filesystem::path& directory, unsigned shard,
                  int folder_fd, Change&& change) {
    {
        ShardLock lock(directory_fd, directory, shard);
        ShardCounter counter = lock.read();
        if (counter.clean && counter.entries == 0 && folder_fd >= 0 &&
            holds_an_entry(folder_fd, shard_path(directory, shard)))
            counter.clean = false;
        if (!counter.clean) {
            counter = folder_fd < 0 ? ShardCounter{}
                                    : count_listing(list_directory(
                                          folder_fd, shard_path(directory, shard), true));
        }
        lock.write(counter, true);
        change(counter);
        lock.write(counter, false);
        if (lock.current()) return;
    }
    ShardLock lock(directory_fd, directory, shard);
    lock.write(lock.read(), true);
}

}  // namespace cudacore::detail::disk
