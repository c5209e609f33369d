// Repairs of the disk program cache's shards (internal): something other than a folder under a
// shard's name, and counters left dirty by a killed process or by damage. Each repair of a
// shard's name is reported (a WarningKind::disk_cache_repaired warning, or prune's report).
#pragma once

#include "cache/disk/shard_counters.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace cudacore::detail::disk {

/// What a repair of a shard's name found and did.
struct ShardRepair {
    bool damaged = false;  ///< something other than a folder stood under the shard's name
    bool removed = false;  ///< it was removed, and a folder made in its place
    std::string message;   ///< what was found and done, naming the path
};

/// Under `lock` (the shard's counter): when something other than a folder stands under the
/// shard's name, removes it (a symbolic link is removed, never followed), makes the folder
/// again and records the shard as empty, which it is either way: no folder, no entries. A
/// folder there (repaired meanwhile) is left alone. Throws CacheError when the counter cannot be
/// written.
ShardRepair remove_non_folder(int directory_fd, const std::filesystem::path& directory,
                              unsigned shard, ShardLock& lock);

/// Reports a repair that found damage as a WarningKind::disk_cache_repaired warning.
void warn_repair(const ShardRepair& repair);

/// Opens the folder of `shard`, whose lock `lock` holds. Something other than a folder under its
/// name is removed (reported as a repair); then, as for a missing folder, -1: the shard is
/// empty. Throws CacheError for any other error.
int open_locked_shard(int directory_fd, const std::filesystem::path& directory, unsigned shard,
                      ShardLock& lock);

/// A shard folder to store into, created when absent and made a folder again (repair reported
/// as a warning) when something else stands under its name; -1 and errno when it cannot be.
/// Throws CacheError when the shard's counter cannot be locked for the repair.
int open_shard_for_store(int directory_fd, const std::filesystem::path& directory,
                         unsigned shard);

/// The counter of one shard, recounted from a listing of its folder; with `repair`, under the
/// counter's lock and written back (clean) where the counters can be written (a read-only cache
/// is counted without repairing). A missing folder, or something other than a folder under the
/// shard's name, is an empty shard. Throws CacheError when the folder cannot be listed.
ShardCounter recount_shard(int directory_fd, const std::filesystem::path& directory,
                           unsigned shard, bool repair);

/// A dirty counter that no one holds, recounted and written back; nullopt when another process
/// holds it (it is changing that shard now). Something other than a folder under the shard's
/// name is removed (reported as a warning): the shard is empty. Throws CacheError.
std::optional<ShardCounter> repair_abandoned_shard(int directory_fd,
                                                   const std::filesystem::path& directory,
                                                   unsigned shard);

}  // namespace cudacore::detail::disk
