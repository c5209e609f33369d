// The disk program cache's files and folders (internal): descriptors, errors that name the path,
// and listings of a folder's entries and temporary files. Everything goes through descriptors
// opened without following symbolic links.
#pragma once

#include "cache/disk/shard_counters.hpp"
#include "support/file_descriptor.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bitset>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace cudacore::detail::disk {

std::string errno_text(int error);

/// `path` between single quotes, as messages name files.
std::string quoted(const std::filesystem::path& path);

/// Throws CacheError "DiskProgramCache: <what> '<path>' failed: <errno text>".
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error);

using detail::FileDescriptor;

/// An entry file as a listing saw it.
struct EntryFile {
    std::string name;
    std::uint64_t size;
    struct timespec modified;
};

/// Whether `a` was used (modified) before `b`: least recently used first.
bool older(const EntryFile& a, const EntryFile& b);

std::int64_t nanoseconds(const timespec& time);
std::int64_t now_nanoseconds();

/// What one folder holds, of the cache's own names.
struct DirectoryListing {
    std::vector<EntryFile> entries;
    std::uint64_t temporary_bytes = 0;  ///< temporary files still there (being written, or left)
    std::uint64_t temporary_files = 0;
    std::bitset<shard_count> not_folders;  ///< shard names holding something else (top folder)
};

/// A listing of the directory open as `directory_fd`, from its first entry (closedir it).
DIR* open_listing(int directory_fd, const std::filesystem::path& directory);

/// Every entry file of the directory open as `directory_fd`, and the temporary files. When
/// asked, removes temporaries whose writer is gone or that are older than
/// DiskProgramCache::stale_temporary_age. Throws CacheError when the folder cannot be listed.
DirectoryListing list_directory(int directory_fd, const std::filesystem::path& directory,
                                bool remove_stale_temporaries);

/// Whether the folder open as `folder_fd` holds an entry (stops at the first: one getdents for
/// a folder that does not).
bool holds_an_entry(int folder_fd, const std::filesystem::path& folder);

/// Removes `name` only if it is still the file `opened` refers to: another process may have
/// renamed a fresh, valid entry over the bad one since it was read.
bool remove_if_same_file(int directory_fd, const std::string& name, int opened);

}  // namespace cudacore::detail::disk
