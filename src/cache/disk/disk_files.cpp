#include "cache/disk/disk_files.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include "cache/disk/disk_program_cache_entry.hpp"
#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

namespace cudacore::detail::disk {
namespace {

namespace fs = std::filesystem;

// Whether the process that wrote a temporary file is gone (so the file will never be renamed
// into place), by the pid in its name. A writer in another pid namespace may look gone: callers
// first check the lock every writer holds on its file (atomic_write_temporary_in_use).
bool writer_is_gone(std::string_view name) {
    const auto pid = atomic_write_temporary_writer(name);
    if (!pid) return true;  // not one of ours: left by an older version, or planted
    return ::kill(*pid, 0) != 0 && errno == ESRCH;
}

// Whether a temporary file found by a listing can go: no writer holds its lock, and its writer
// is gone or it is older than any write takes.
bool stale_temporary(int directory_fd, const char* name, const struct stat& info,
                     std::chrono::system_clock::time_point now) {
    const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
    return !atomic_write_temporary_in_use(directory_fd, name) &&
           (writer_is_gone(name) || now - modified > DiskProgramCache::stale_temporary_age);
}

}  // namespace

std::string errno_text(int error) { return std::strerror(error); }

std::string quoted(const fs::path& path) {
    std::string text = "'";
    text += path.string();
    text += '\'';
    return text;
}

void fail(const std::string& what, const fs::path& path, int error) {
    throw CacheError("DiskProgramCache: " + what + " '" + path.string() + "' failed: " +
                     errno_text(error));
}

bool older(const EntryFile& a, const EntryFile& b) {
    if (a.modified.tv_sec != b.modified.tv_sec) return a.modified.tv_sec < b.modified.tv_sec;
    return a.modified.tv_nsec < b.modified.tv_nsec;
}

std::int64_t nanoseconds(const timespec& time) {
    return std::int64_t{time.tv_sec} * 1'000'000'000 + time.tv_nsec;
}

std::int64_t now_nanoseconds() {
    timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return nanoseconds(now);
}

// fdopendir takes the descriptor it is given: it lists through a duplicate, rewound, since
// duplicates share one position.
DIR* open_listing(int directory_fd, const fs::path& directory) {
    const int listing_fd = ::fcntl(directory_fd, F_DUPFD_CLOEXEC, 0);
    if (listing_fd < 0) fail("dup", directory, errno);
    DIR* dir = ::fdopendir(listing_fd);
    if (dir == nullptr) {
        const int error = errno;
        ::close(listing_fd);
        fail("opendir", directory, error);
    }
    ::rewinddir(dir);
    return dir;
}

DirectoryListing list_directory(int directory_fd, const fs::path& directory,
                                bool remove_stale_temporaries) {
    DIR* dir = open_listing(directory_fd, directory);
    DirectoryListing listing;
    const auto now = std::chrono::system_clock::now();
    for (;;) {
        errno = 0;  // readdir returns nullptr at the end and on error; only errno tells them apart
        const dirent* item = ::readdir(dir);
        if (item == nullptr) break;
        const std::string_view name = item->d_name;
        struct stat info {};
        if (::fstatat(directory_fd, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (is_shard_folder_name(name) && !S_ISDIR(info.st_mode))
            listing.not_folders.set(std::stoul(std::string(name), nullptr, 16));
        if (!S_ISREG(info.st_mode)) continue;
        const auto size = static_cast<std::uint64_t>(info.st_size);
        if (is_entry_name(name)) {
            listing.entries.push_back({std::string(name), size, info.st_mtim});
        } else if (is_cache_temporary(name)) {
            if (remove_stale_temporaries &&
                stale_temporary(directory_fd, item->d_name, info, now) &&
                ::unlinkat(directory_fd, item->d_name, 0) == 0)
                continue;
            listing.temporary_bytes += size;
            ++listing.temporary_files;
        }
    }
    const int error = errno;
    ::closedir(dir);
    if (error != 0) fail("list", directory, error);
    return listing;
}

bool holds_an_entry(int folder_fd, const fs::path& folder) {
    DIR* dir = open_listing(folder_fd, folder);
    bool found = false;
    while (const dirent* item = ::readdir(dir)) {
        if (is_entry_name(item->d_name)) {
            found = true;
            break;
        }
    }
    ::closedir(dir);
    return found;
}

bool remove_if_same_file(int directory_fd, const std::string& name, int opened) {
    struct stat read_info {}, current {};
    if (::fstat(opened, &read_info) != 0 ||
        ::fstatat(directory_fd, name.c_str(), &current, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    return read_info.st_dev == current.st_dev && read_info.st_ino == current.st_ino &&
           ::unlinkat(directory_fd, name.c_str(), 0) == 0;
}

}  // namespace cudacore::detail::disk
