#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/activity_counters.hpp"
#include "cache/shard_counters.hpp"
#include "support/nvtx_range.hpp"
#include "support/atomic_file.hpp"

#include <dirent.h>
#include <exception>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <new>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

namespace cudacore {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> entry_magic = {'C', 'C', 'E', 'N', 'T', 'R', 'Y', '\n'};
constexpr std::size_t entry_header_size = entry_magic.size() + 32;
constexpr std::string_view entry_extension = ".ccentry";

// The cache's own marker, in the Cache Directory Tagging format (backup tools skip the folder);
// the second line makes it cudacore's: only a folder that carries it is maintained (cleared,
// pruned) as a cache.
constexpr std::string_view marker_name = "CACHEDIR.TAG";
constexpr std::string_view marker_signature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr std::string_view marker_owner = "# This directory is a cudacore program cache.\n";
constexpr std::string_view marker_text =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This directory is a cudacore program cache.\n"
    "# Its entries (<64 hex digits>.ccentry) are removed by `cudacore cache clear`; other files "
    "are left alone.\n";
constexpr std::string_view lock_name = ".lock";

bool is_lower_hex(std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// <64 lower-case hex digits>.ccentry: the only names the cache stores entries under.
bool is_entry_name(std::string_view name) {
    return name.size() == 64 + entry_extension.size() && name.ends_with(entry_extension) &&
           is_lower_hex(name.substr(0, 64));
}

// A temporary file the cache's own writes leave while they run (or when killed):
// ".<entry or marker name>.tmp-<pid>-<counter>-<random>", the form of write_file_atomically_at.
bool is_cache_temporary(std::string_view name) {
    constexpr std::string_view marker = ".tmp-";
    const std::size_t at = name.find(marker);
    if (!name.starts_with(".") || at == std::string_view::npos) return false;
    const std::string_view target = name.substr(1, at - 1);
    if (!is_entry_name(target) && target != marker_name) return false;
    std::string_view rest = name.substr(at + marker.size());
    for (int part = 0; part < 3; ++part) {
        const std::size_t digits = rest.find_first_not_of("0123456789");
        const std::size_t length = digits == std::string_view::npos ? rest.size() : digits;
        if (length == 0) return false;
        rest.remove_prefix(length);
        if (part < 2) {
            if (!rest.starts_with("-")) return false;
            rest.remove_prefix(1);
        }
    }
    return rest.empty();
}

// Names the cache writes: entries, their temporaries, the lock, the marker, the shard folders
// and their counters.
bool is_cache_name(std::string_view name) {
    return is_entry_name(name) || is_cache_temporary(name) || name == lock_name ||
           name == marker_name || name == detail::shard_counters_name ||
           detail::is_shard_folder_name(name);
}

std::string errno_text(int error) { return std::strerror(error); }

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error) {
    throw CacheError("DiskProgramCache: " + what + " '" + path.string() + "' failed: " +
                     errno_text(error));
}

struct FileDescriptor {
    int fd = -1;
    FileDescriptor() = default;
    explicit FileDescriptor(int value) : fd(value) {}
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor(FileDescriptor&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    FileDescriptor& operator=(FileDescriptor&& other) noexcept {
        std::swap(fd, other.fd);
        return *this;
    }
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// Holds an flock on <dir>/.lock for the lifetime of the object.
class DirectoryLock {
public:
    DirectoryLock(int directory_fd, const fs::path& directory, int operation) {
        const fs::path path = directory / ".lock";
        for (int attempt = 0; file_.fd < 0; ++attempt) {
            // Non-blocking: a FIFO planted under the name must not hang the open.
            file_.fd = ::openat(directory_fd, ".lock",
                                O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
            int error = errno;
            struct stat info {};
            if (file_.fd >= 0 && ::fstat(file_.fd, &info) == 0 && !S_ISREG(info.st_mode)) {
                file_ = FileDescriptor();
                error = EINVAL;
            }
            if (file_.fd >= 0) break;
            // Damage (a symbolic link, a directory, a FIFO, a socket): removed once, and made
            // again; an empty directory only.
            const bool damaged = error == ELOOP || error == EISDIR || error == ENXIO || error == EINVAL;
            if (!damaged || attempt > 0 ||
                ::fstatat(directory_fd, ".lock", &info, AT_SYMLINK_NOFOLLOW) != 0 ||
                S_ISREG(info.st_mode) ||
                ::unlinkat(directory_fd, ".lock", S_ISDIR(info.st_mode) ? AT_REMOVEDIR : 0) != 0)
                fail("open lock file", path, error);
            warn(WarningKind::disk_cache_repaired,
                 "DiskProgramCache: '" + path.string() + "' was " +
                     std::string(detail::file_kind(info.st_mode)) +
                     ", not the cache's lock file: removed, and made again");
        }
        while (::flock(file_.fd, operation) != 0) {
            if (errno != EINTR) fail("flock", path, errno);
        }
    }

private:
    FileDescriptor file_;
};

struct EntryFile {
    std::string name;
    std::uint64_t size;
    struct timespec modified;
};

bool older(const EntryFile& a, const EntryFile& b) {
    if (a.modified.tv_sec != b.modified.tv_sec) return a.modified.tv_sec < b.modified.tv_sec;
    return a.modified.tv_nsec < b.modified.tv_nsec;
}

// Whether the process that wrote a temporary file is gone (so the file will never be renamed
// into place), by the pid in its name. A writer in another pid namespace may look gone: callers
// first check the lock every writer holds on its file (atomic_write_temporary_in_use).
bool writer_is_gone(std::string_view name) {
    const auto pid = detail::atomic_write_temporary_writer(name);
    if (!pid) return true;  // not one of ours: left by an older version, or planted
    return ::kill(*pid, 0) != 0 && errno == ESRCH;
}

struct DirectoryListing {
    std::vector<EntryFile> entries;
    std::uint64_t temporary_bytes = 0;  // temporary files still there (being written, or left)
    std::uint64_t temporary_files = 0;
    std::bitset<detail::shard_count> not_folders;  // shard names holding something else
};

// A listing of the directory open as `directory_fd`, from its first entry (closedir it).
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

// Every entry file of the directory open as `directory_fd`, and the temporary files. When asked,
// removes temporaries whose writer is gone or that are older than the limit.
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
        if (detail::is_shard_folder_name(name) && !S_ISDIR(info.st_mode))
            listing.not_folders.set(std::stoul(std::string(name), nullptr, 16));
        if (!S_ISREG(info.st_mode)) continue;
        const auto size = static_cast<std::uint64_t>(info.st_size);
        if (is_entry_name(name)) {
            listing.entries.push_back({std::string(name), size, info.st_mtim});
        } else if (is_cache_temporary(name)) {
            const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
            if (remove_stale_temporaries &&
                !detail::atomic_write_temporary_in_use(directory_fd, item->d_name) &&
                (writer_is_gone(name) ||
                 now - modified > DiskProgramCache::stale_temporary_age) &&
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

// Removes `name` only if it is still the file `opened` refers to: another process may have
// renamed a fresh, valid entry over the bad one since we read it.
bool remove_if_same_file(int directory_fd, const std::string& name, int opened) {
    struct stat read_info {}, current {};
    if (::fstat(opened, &read_info) != 0 ||
        ::fstatat(directory_fd, name.c_str(), &current, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    return read_info.st_dev == current.st_dev && read_info.st_ino == current.st_ino &&
           ::unlinkat(directory_fd, name.c_str(), 0) == 0;
}

// Checks the directory through its open descriptor, so what is checked is what is used.
void check_private_directory(int directory_fd, const fs::path& directory) {
    struct stat info {};
    if (::fstat(directory_fd, &info) != 0) fail("fstat", directory, errno);
    if (!S_ISDIR(info.st_mode)) {
        throw CacheError("DiskProgramCache: '" + directory.string() + "' is not a directory");
    }
    if (info.st_uid != ::geteuid()) {
        throw CacheError("DiskProgramCache: refusing cache directory '" + directory.string() +
                         "': it is owned by uid " + std::to_string(info.st_uid) + ", not by you (uid " +
                         std::to_string(::geteuid()) +
                         "); code cached there by another user could run on your GPU. Use a "
                         "directory of your own (CUDACORE_CACHE_DIR)");
    }
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
        throw CacheError("DiskProgramCache: refusing cache directory '" + directory.string() +
                         "': its mode " + mode +
                         " lets other users write to it, so they could plant code that would run "
                         "on your GPU. Run `chmod go-w` on it (0700 is what cudacore creates)");
    }
}

// Whether the folder carries cudacore's marker; a marker of another program is refused.
bool has_own_marker(int directory_fd, const fs::path& directory) {
    FileDescriptor file(::openat(directory_fd, std::string(marker_name).c_str(),
                                 O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (file.fd < 0) {
        if (errno == ENOENT) return false;
        fail("open", directory / marker_name, errno);
    }
    std::string text;
    try {
        text = detail::read_open_file_bounded(file.fd, directory / marker_name, 4096);
    } catch (const std::exception&) {
        text.clear();  // a directory, a FIFO, a huge file: not our marker
    }
    if (!text.starts_with(marker_signature) ||
        text.find(marker_owner) == std::string::npos) {
        throw CacheError("DiskProgramCache: refusing '" + directory.string() + "': its " +
                         std::string(marker_name) + " is not cudacore's (another program's cache?)");
    }
    return true;
}

// The first name in the folder that the cache never writes, or empty.
std::string foreign_name(int directory_fd, const fs::path& directory) {
    DIR* dir = open_listing(directory_fd, directory);
    std::string foreign;
    while (const dirent* item = ::readdir(dir)) {
        const std::string_view name = item->d_name;
        if (name == "." || name == ".." || is_cache_name(name)) continue;
        foreign = name;
        break;
    }
    ::closedir(dir);
    return foreign;
}

// `/` is never a cache, whatever it holds.
void refuse_root(int directory_fd, const fs::path& directory) {
    struct stat info {}, root {};
    if (::fstat(directory_fd, &info) == 0 && ::stat("/", &root) == 0 && info.st_dev == root.st_dev &&
        info.st_ino == root.st_ino) {
        throw CacheError("DiskProgramCache: refusing '" + directory.string() +
                         "': the root directory is never a cache directory");
    }
}

unsigned shard_of(const CacheKey& key) { return key.digest[0]; }

std::int64_t nanoseconds(const timespec& time) {
    return std::int64_t{time.tv_sec} * 1'000'000'000 + time.tv_nsec;
}

std::int64_t now_nanoseconds() {
    timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return nanoseconds(now);
}

fs::path shard_path(const fs::path& directory, unsigned shard) {
    return directory / detail::shard_folder_name(shard);
}

// A shard folder, opened without following a symlink (created first when asked); -1 and errno
// when it cannot be.
int open_shard(int directory_fd, unsigned shard, bool create) {
    const std::string name(detail::shard_folder_name(shard));
    constexpr int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(directory_fd, name.c_str(), flags);
    if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(directory_fd, name.c_str(), 0700) != 0 && errno != EEXIST) return -1;
        fd = ::openat(directory_fd, name.c_str(), flags);
    }
    return fd;
}

// What open_shard's errno says when something other than a folder stands under a shard's name:
// a file or a FIFO (ENOTDIR), a symbolic link (ENOTDIR or ELOOP: never followed).
bool not_a_folder(int error) { return error == ENOTDIR || error == ELOOP; }

// What a repair of a shard's name found and did.
struct ShardRepair {
    bool damaged = false;  // something other than a folder stood under the shard's name
    bool removed = false;  // it was removed, and a folder made in its place
    std::string message;   // what was found and done, naming the path
};

// Under `lock` (the shard's counter): when something other than a folder stands under the
// shard's name, removes it (a symbolic link is removed, never followed), makes the folder again
// and records the shard as empty, which it is either way: no folder, no entries. A folder there
// (repaired meanwhile) is left alone. Throws CacheError when the counter cannot be written.
ShardRepair remove_non_folder(int directory_fd, const fs::path& directory, unsigned shard,
                              detail::ShardLock& lock) {
    const std::string name(detail::shard_folder_name(shard));
    struct stat info {};
    if (::fstatat(directory_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISDIR(info.st_mode))
        return {};
    ShardRepair repair;
    repair.damaged = true;
    repair.message = "'" + shard_path(directory, shard).string() + "' is " +
                     std::string(detail::file_kind(info.st_mode)) + ", not a shard folder";
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
        repair.message += ", and removing it failed (unlinkat: " + error + "): the shard is skipped";
    }
    lock.write({}, false);
    return repair;
}

void report(const ShardRepair& repair) {
    if (repair.damaged) warn(WarningKind::disk_cache_repaired, "DiskProgramCache: " + repair.message);
}

// Opens the folder of `shard`, whose lock `lock` holds. Something other than a folder under its
// name is removed (reported as a repair); then, as for a missing folder, -1: the shard is empty.
// Throws CacheError for any other error.
int open_locked_shard(int directory_fd, const fs::path& directory, unsigned shard,
                      detail::ShardLock& lock) {
    const int fd = open_shard(directory_fd, shard, false);
    if (fd >= 0) return fd;
    const int error = errno;
    if (not_a_folder(error)) {
        report(remove_non_folder(directory_fd, directory, shard, lock));
    } else if (error != ENOENT) {
        fail("open", shard_path(directory, shard), error);
    }
    return -1;
}


// A shard folder to store into, created when absent and made a folder again (repair reported as
// a warning) when something else stands under its name; -1 and errno when it cannot be.
// Throws CacheError when the shard's counter cannot be locked for the repair.
int open_shard_for_store(int directory_fd, const fs::path& directory, unsigned shard) {
    const int fd = open_shard(directory_fd, shard, true);
    if (fd >= 0 || !not_a_folder(errno)) return fd;
    {
        detail::ShardLock lock(directory_fd, directory, shard);
        report(remove_non_folder(directory_fd, directory, shard, lock));
    }
    return open_shard(directory_fd, shard, true);
}

// A shard's counter as a listing of its folder gives it.
detail::ShardCounter count_listing(const DirectoryListing& listing) {
    detail::ShardCounter counter;
    for (const auto& entry : listing.entries) {
        counter.bytes += entry.size;
        ++counter.entries;
        const std::int64_t modified = nanoseconds(entry.modified);
        if (counter.oldest_ns == 0 || modified < counter.oldest_ns) counter.oldest_ns = modified;
    }
    return counter;
}

// Whether the folder open as `folder_fd` holds an entry (stops at the first: one getdents for a
// folder that does not).
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

// Changes a shard's entries with `change` under the lock of its counter, which is marked dirty
// meanwhile: a process killed inside `change` (or an exception out of it) leaves it dirty, and
// the next holder recounts the shard. `change` adjusts the counter it is given (recounted first
// when it was dirty, or when it says the shard is empty and its folder holds an entry: the
// zeros an older version writes over a dropped .shards, or a table restored from a backup).
// The counters file deleted or replaced meanwhile (a sync tool, a repair), the new count went to
// a file no one reads, and a recount made by another process in the new one may have missed the
// change: the slot is marked dirty there, so that the next holder counts what is now in place.
template <typename Change>
void change_shard(int directory_fd, const fs::path& directory, unsigned shard, int folder_fd,
                  Change&& change) {
    {
        detail::ShardLock lock(directory_fd, directory, shard);
        detail::ShardCounter counter = lock.read();
        if (counter.clean && counter.entries == 0 && folder_fd >= 0 &&
            holds_an_entry(folder_fd, shard_path(directory, shard)))
            counter.clean = false;
        if (!counter.clean) {
            counter =
                folder_fd < 0
                    ? detail::ShardCounter{}
                    : count_listing(list_directory(folder_fd, shard_path(directory, shard), true));
        }
        lock.write(counter, true);
        change(counter);
        lock.write(counter, false);
        if (lock.current()) return;
    }
    detail::ShardLock lock(directory_fd, directory, shard);
    lock.write(lock.read(), true);
}

// Moves the entries of the flat layout (<dir>/<key>.ccentry) into their shard folders and counts
// them there; one whose shard already holds the key is removed (the shard's is the one found).
// Removes stale temporary files of the top folder on the way. Returns how many were moved.
std::uint64_t migrate_flat_entries(int directory_fd, const fs::path& directory) {
    DirectoryLock lock(directory_fd, directory, LOCK_EX);  // one migration at a time
    DirectoryListing listing = list_directory(directory_fd, directory, true);
    // Names start with their shard's two hex digits: sorted by name, a shard's entries are
    // together.
    std::sort(listing.entries.begin(), listing.entries.end(),
              [](const EntryFile& a, const EntryFile& b) { return a.name < b.name; });
    std::uint64_t moved = 0;
    for (auto first = listing.entries.begin(); first != listing.entries.end();) {
        const std::string prefix = first->name.substr(0, 2);
        const auto last = std::find_if(first, listing.entries.end(), [&](const EntryFile& e) {
            return !e.name.starts_with(prefix);
        });
        const unsigned shard = static_cast<unsigned>(std::stoul(prefix, nullptr, 16));
        FileDescriptor folder(open_shard_for_store(directory_fd, directory, shard));
        if (folder.fd >= 0) {
            change_shard(directory_fd, directory, shard, folder.fd, [&](detail::ShardCounter& c) {
                for (auto entry = first; entry != last; ++entry) {
                    const char* name = entry->name.c_str();
                    if (::renameat2(directory_fd, name, folder.fd, name, RENAME_NOREPLACE) == 0) {
                        const std::int64_t modified = nanoseconds(entry->modified);
                        if (c.entries == 0 || (c.oldest_ns != 0 && modified < c.oldest_ns))
                            c.oldest_ns = modified;
                        c.bytes = detail::saturating_add(c.bytes, entry->size);
                        ++c.entries;
                        ++moved;
                    } else if (errno == EEXIST) {
                        ::unlinkat(directory_fd, name, 0);
                    }  // else left where it is, still found by get
                }
            });
        }
        first = last;
    }
    return moved;
}

// Makes the shards' counters whole when they are missing, cut short or not a regular file (a new
// cache, one of the flat layout, or one whose .shards a backup or sync tool dropped: shards with
// a folder are then recounted before they are trusted), then moves flat entries into their
// shards. A shard folder is created with its first entry.
void prepare_layout(int directory_fd, const fs::path& directory) {
    struct stat info {};
    const std::string counters(detail::shard_counters_name);
    if (::fstatat(directory_fd, counters.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(info.st_mode) || static_cast<std::uint64_t>(info.st_size) < detail::shard_table_bytes)
        detail::ensure_shard_table(directory_fd, directory);
    // Entries of the flat layout: the top folder holds about 260 names once they are moved.
    if (holds_an_entry(directory_fd, directory)) migrate_flat_entries(directory_fd, directory);
}

// The counter of one shard, recounted from a listing of its folder; with `repair`, under the
// counter's lock and written back (clean) where the counters can be written (a read-only cache
// is counted without repairing). A missing folder, or something other than a folder under the
// shard's name, is an empty shard.
detail::ShardCounter recount_shard(int directory_fd, const fs::path& directory, unsigned shard,
                                   bool repair) {
    const fs::path folder_path = shard_path(directory, shard);
    auto count = [&](int folder_fd, bool remove_stale) {
        return count_listing(list_directory(folder_fd, folder_path, remove_stale));
    };
    std::optional<detail::ShardLock> lock;
    if (repair) {
        try {
            lock.emplace(directory_fd, directory, shard);
        } catch (const CacheError&) {
            // Read-only (or the counters cannot be locked): counted, not repaired.
        }
    }
    if (lock) {
        const detail::ShardCounter counter = lock->read();
        if (counter.clean) return counter;  // repaired by another process meanwhile
    }
    FileDescriptor folder(open_shard(directory_fd, shard, false));
    if (folder.fd < 0 && errno != ENOENT && !not_a_folder(errno)) fail("open", folder_path, errno);
    const detail::ShardCounter counter =
        folder.fd < 0 ? detail::ShardCounter{} : count(folder.fd, lock.has_value());
    if (lock) lock->write(counter, false);
    return counter;
}

// A dirty counter that no one holds, recounted and written back; nullopt when another process
// holds it (it is changing that shard now). Something other than a folder under the shard's name
// is removed (reported as a warning): the shard is empty.
std::optional<detail::ShardCounter> repair_abandoned_shard(int directory_fd,
                                                          const fs::path& directory,
                                                          unsigned shard) {
    detail::ShardLock lock(directory_fd, directory, shard, false);
    if (!lock.held()) return std::nullopt;
    detail::ShardCounter counter = lock.read();
    if (counter.clean) return counter;
    FileDescriptor folder(open_locked_shard(directory_fd, directory, shard, lock));
    if (folder.fd < 0) {
        lock.write({}, false);
        return detail::ShardCounter{};
    }
    counter = count_listing(list_directory(folder.fd, shard_path(directory, shard), true));
    lock.write(counter, false);
    return counter;
}

// Removes least recently used entries of one shard (under its counter's lock, from a listing of
// its folder, which also recounts it) while the cache is over `bound`, stopping at an entry used
// more recently than `newer_elsewhere` (another shard has an older one); then goes on until at
// least `at_least` bytes are gone. Records the shard's oldest remaining entry. Returns how many
// entries were removed. Something other than a folder under the shard's name is removed (the
// shard is empty) and reported as a warning.
std::uint64_t evict_from_shard(int directory_fd, const fs::path& directory, unsigned shard,
                               std::uint64_t bound, std::int64_t newer_elsewhere,
                               std::uint64_t at_least) {
    const fs::path folder_path = shard_path(directory, shard);
    detail::ShardLock lock(directory_fd, directory, shard);
    FileDescriptor folder(open_locked_shard(directory_fd, directory, shard, lock));
    if (folder.fd < 0) {
        lock.write({}, false);  // the folder is gone, and its entries with it
        return 0;
    }
    const detail::ShardTable table = lock.read_all();
    std::uint64_t total = 0;
    for (unsigned other = 0; other < detail::shard_count; ++other)
        if (other != shard) total = detail::saturating_add(total, table[other].bytes);
    lock.write(table[shard], true);
    DirectoryListing listing = list_directory(folder.fd, folder_path, true);
    detail::ShardCounter counter = count_listing(listing);
    total = detail::saturating_add(total, counter.bytes);
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

// After a put: while the counters add up to more than `bound`, evicts from the shard whose least
// recently used entry is the oldest known (a shard whose record proves stale is listed, its
// record corrected, and the next one tried; after a few such listings the shard then oldest gives
// way anyway). A shard that claims more than the whole bound is listed first (a counter wrong but
// possible must not make every other shard give way). Shards another process is changing now are
// left to it. Each eviction removes at least a tenth of its shard, so the listing it costs (one
// shard of 256) is shared by the puts that follow. A shard that cannot be listed is skipped and
// named in a warning; the others still keep the bound. Never throws: the entry is stored already.
std::uint64_t evict_after_put(int directory_fd, const fs::path& directory,
                              std::uint64_t bound) {
    // After this many listings, the oldest known shard gives way whatever the others hold, until
    // the cache is within its bound.
    constexpr int max_listings = 8;
    std::uint64_t removed = 0;
    std::bitset<detail::shard_count> listed, skipped;  // by this call
    auto skip = [&](unsigned shard, const std::exception& e) {
        skipped.set(shard);
        warn(WarningKind::disk_cache_repaired,
             "DiskProgramCache: evicting from shard " + std::string(detail::shard_folder_name(shard)) +
                 " of '" + directory.string() + "' failed, the shard is skipped: " + e.what());
    };
    try {
        for (int listing = 0; listing < max_listings + static_cast<int>(detail::shard_count);
             ++listing) {
            auto table = detail::read_shard_table(directory_fd, directory);
            if (!table) return removed;
            // A dirty counter whose lock is free was left by a process killed while changing its
            // shard, or by damage (a missing or impossible slot); one whose lock is held is being
            // changed now. Recounted before it is trusted.
            if (listing == 0) {
                for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
                    if ((*table)[shard].clean) continue;
                    try {
                        if (const auto repaired =
                                repair_abandoned_shard(directory_fd, directory, shard)) {
                            (*table)[shard] = *repaired;
                            listed.set(shard);
                        }
                    } catch (const CacheError& e) {
                        skip(shard, e);
                    }
                }
            }
            std::uint64_t total = 0;
            for (const auto& counter : *table) total = detail::saturating_add(total, counter.bytes);
            if (total <= bound) return removed;
            constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
            unsigned victim = detail::shard_count;
            std::int64_t victim_oldest = none, next_oldest = none;
            for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
                const detail::ShardCounter& counter = (*table)[shard];
                // A dirty counter here is being changed by another process now: not waited for.
                if (!counter.clean || counter.entries == 0 || skipped[shard]) continue;
                // Unknown (0) first: a listing tells; a claim of more than the bound before all.
                const std::int64_t oldest =
                    counter.bytes > bound && !listed[shard] ? -1 : counter.oldest_ns;
                if (oldest < victim_oldest) {
                    next_oldest = victim_oldest;
                    victim = shard;
                    victim_oldest = oldest;
                } else if (oldest < next_oldest) {
                    next_oldest = oldest;
                }
            }
            if (victim == detail::shard_count) return removed;
            const bool last_try = listing + 1 >= max_listings;
            const std::uint64_t at_least = (*table)[victim].bytes / 10;
            try {
                removed += evict_from_shard(directory_fd, directory, victim, bound,
                                            last_try ? none : std::max<std::int64_t>(next_oldest, 0),
                                            at_least);
                listed.set(victim);
            } catch (const CacheError& e) {
                skip(victim, e);
            }
        }
    } catch (const std::exception& e) {
        warn(WarningKind::disk_cache_repaired, "DiskProgramCache: evicting from '" +
                                                   directory.string() + "' failed: " + e.what());
    }
    return removed;
}

// Reads and checks the entry `name` in the folder open as `folder_fd`, leaving it open in `file`.
struct EntryRead {
    enum class Outcome { absent, hit, miss, corrupt } outcome = Outcome::absent;
    std::optional<ObjectCode> code;
    bool symlink = false;  // a symlink where the entry belongs (never followed)
    bool remove = false;   // corrupt: remove it if it is still the file read
};

EntryRead read_entry(int folder_fd, const std::string& name, const fs::path& path,
                     const CacheKey& key, std::uint64_t max_bytes, FileDescriptor& file) {
    using Outcome = EntryRead::Outcome;
    // Non-blocking: a FIFO planted where the entry belongs must not hang the read.
    file.fd = ::openat(folder_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (file.fd < 0) {
        if (errno == ENOENT) return {};
        if (errno == ELOOP) return {Outcome::corrupt, std::nullopt, true, false};
        fail("open", path, errno);
    }
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) fail("fstat", path, errno);
    // Bounded before reading: nothing larger than this cache writes is read (a junk file of
    // gigabytes where an entry belongs costs one fstat, not its size in memory).
    const auto size = static_cast<std::uint64_t>(info.st_size);
    const std::uint64_t format_limit = entry_header_size + ObjectCode::max_serialized_size;
    if (S_ISREG(info.st_mode) && size > std::min(max_bytes, format_limit)) {
        // Larger than any cache writes: junk. Else a cache with a larger bound may have written
        // it: left to that one.
        if (size > format_limit) return {Outcome::corrupt, std::nullopt, false, true};
        return {Outcome::miss, std::nullopt};
    }
    std::string bytes;
    bool readable = S_ISREG(info.st_mode);
    if (readable) {
        try {
            bytes = detail::read_open_file_bounded(file.fd, path, std::min(max_bytes, format_limit));
        } catch (const std::length_error&) {
            readable = false;  // grew past any entry's size since the fstat above
        } catch (const std::bad_alloc&) {
            return {Outcome::miss, std::nullopt};  // no memory for it now: a miss, the entry stays
        } catch (const std::system_error& e) {
            throw CacheError(std::string("DiskProgramCache: ") + e.what());
        }
    }
    if (readable) {
        try {
            return {Outcome::hit, DiskProgramCache::decode_entry(bytes, key)};
        } catch (const SerializationError&) {
        } catch (const std::bad_alloc&) {
            return {Outcome::miss, std::nullopt};
        }
    }
    // A directory there is left alone (it may hold a tree someone put there by mistake): it just
    // stays a miss, and the next put fails and is reported.
    return {Outcome::corrupt, std::nullopt, false, !S_ISDIR(info.st_mode)};
}

}  // namespace

DiskProgramCache::DiskProgramCache(fs::path directory, std::uint64_t max_bytes)
    : DiskProgramCache(std::move(directory), max_bytes, Opening::create) {}

std::unique_ptr<DiskProgramCache> DiskProgramCache::open_existing(fs::path directory,
                                                                  std::uint64_t max_bytes) {
    struct stat info {};
    if (::lstat(directory.c_str(), &info) != 0 && errno == ENOENT) return nullptr;
    return std::unique_ptr<DiskProgramCache>(
        new DiskProgramCache(std::move(directory), max_bytes, Opening::existing));
}

DiskProgramCache::DiskProgramCache(fs::path directory, std::uint64_t max_bytes, Opening opening)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {
    if (directory_.empty()) throw CacheError("DiskProgramCache: empty directory path");
    directory_ = directory_.lexically_normal();
    if (directory_.has_filename() == false) directory_ = directory_.parent_path();
    if (opening == Opening::create) {
        if (const fs::path parent = directory_.parent_path(); !parent.empty()) {
            std::error_code error;
            fs::create_directories(parent, error);
            if (error) fail("create parent directory", parent, error.value());
        }
        if (::mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST)
            fail("mkdir", directory_, errno);
    }
    // Opened once, never through a symlink; every later operation is relative to this
    // descriptor, so swapping the path for a symlink after the check redirects nothing.
    directory_fd_ = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (directory_fd_ < 0) {
        const int error = errno;
        struct stat info {};
        if (error == ELOOP || (::lstat(directory_.c_str(), &info) == 0 && S_ISLNK(info.st_mode))) {
            throw CacheError("DiskProgramCache: refusing cache directory '" + directory_.string() +
                             "': it is a symbolic link; point the cache at the real directory");
        }
        fail("open", directory_, error);
    }
    try {
        check_private_directory(directory_fd_, directory_);
        refuse_root(directory_fd_, directory_);
        if (!has_own_marker(directory_fd_, directory_)) {
            // Maintenance only touches a folder the cache marked. A new folder, or one holding
            // nothing but what a cache writes (made before the marker existed), is marked.
            if (opening == Opening::existing) {
                throw CacheError("DiskProgramCache: refusing '" + directory_.string() +
                                 "': it is not a cudacore cache (no " + std::string(marker_name) +
                                 " of cudacore's; a compile through the cache marks a cache it "
                                 "creates or one that holds only cache entries)");
            }
            if (const std::string foreign = foreign_name(directory_fd_, directory_);
                !foreign.empty()) {
                throw CacheError("DiskProgramCache: refusing '" + directory_.string() +
                                 "': it is not a cudacore cache (it holds '" + foreign +
                                 "' and no " + std::string(marker_name) +
                                 " of cudacore's); point the cache at a new or empty folder");
            }
            try {
                detail::write_file_atomically_at(directory_fd_, std::string(marker_name),
                                                 marker_text, 0600, directory_ / marker_name);
            } catch (const std::system_error& e) {
                throw CacheError(std::string("DiskProgramCache: marking the cache: ") + e.what());
            }
        }
        // The shard folders and their counters; entries of the flat layout (written before it,
        // or since by an older version) are moved into their shards.
        if (opening == Opening::create) prepare_layout(directory_fd_, directory_);
    } catch (...) {
        ::close(directory_fd_);
        throw;
    }
}

DiskProgramCache::~DiskProgramCache() { ::close(directory_fd_); }

std::string DiskProgramCache::entry_name(const CacheKey& key) {
    return key.hex() + std::string(entry_extension);
}

fs::path DiskProgramCache::entry_path(const CacheKey& key) const {
    return directory_ / detail::shard_folder_name(shard_of(key)) / entry_name(key);
}

fs::path DiskProgramCache::flat_entry_path(const CacheKey& key) const {
    return directory_ / entry_name(key);
}

std::string DiskProgramCache::encode_entry(const CacheKey& key, const ObjectCode& code) {
    std::string bytes(entry_magic.begin(), entry_magic.end());
    bytes.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    bytes += code.serialize();
    return bytes;
}

ObjectCode DiskProgramCache::decode_entry(std::string_view bytes, const CacheKey& expected) {
    if (bytes.size() < entry_header_size ||
        std::memcmp(bytes.data(), entry_magic.data(), entry_magic.size()) != 0) {
        throw SerializationError("DiskProgramCache: entry " + expected.hex() + " (" +
                                 std::to_string(bytes.size()) + " bytes) has no entry header");
    }
    if (std::memcmp(bytes.data() + entry_magic.size(), expected.digest.data(), 32) != 0) {
        throw SerializationError("DiskProgramCache: entry " + expected.hex() +
                                 " holds the code of another key");
    }
    try {
        return ObjectCode::deserialize(bytes.substr(entry_header_size));
    } catch (const SerializationError& e) {
        throw SerializationError("DiskProgramCache: entry " + expected.hex() + ": " + e.what());
    }
}

std::optional<ObjectCode> DiskProgramCache::get(const CacheKey& key) {
    using Outcome = EntryRead::Outcome;
    const detail::NvtxRange range("cache get disk");
    using detail::CacheTier;
    using detail::TierEvent;
    // A get that throws (the shard cannot be opened) is a failure in cache_stats().
    struct CountThrow {
        int before = std::uncaught_exceptions();
        ~CountThrow() {
            if (std::uncaught_exceptions() > before)
                detail::count_tier_event(CacheTier::disk, TierEvent::failure);
        }
    } count_throw;
    const unsigned shard = shard_of(key);
    const std::string name = entry_name(key);
    FileDescriptor folder(open_shard(directory_fd_, shard, false));
    // Something other than a folder where the shard belongs is a miss: the next put there
    // replaces it.
    if (folder.fd < 0 && errno != ENOENT && !not_a_folder(errno))
        fail("open", shard_path(directory_, shard), errno);
    FileDescriptor file;
    EntryRead read;
    if (folder.fd >= 0) read = read_entry(folder.fd, name, entry_path(key), key, max_bytes_, file);
    const bool flat = read.outcome == Outcome::absent;
    if (flat) {  // an entry of the flat layout, written before the shards (or by an older version)
        read = read_entry(directory_fd_, name, flat_entry_path(key), key, max_bytes_, file);
    }
    const int read_folder = flat ? directory_fd_ : folder.fd;
    switch (read.outcome) {
        case Outcome::absent:
        case Outcome::miss:
            ++misses_;
            detail::count_tier_event(CacheTier::disk, TierEvent::miss);
            return std::nullopt;
        case Outcome::corrupt:
            if (read.symlink) {
                ::unlinkat(read_folder, name.c_str(), 0);  // never counted: not a regular file
            } else if (read.remove) {
                if (flat) {
                    remove_if_same_file(directory_fd_, name, file.fd);
                } else {
                    // Recounted: a damaged entry need not have the size it was counted with. A
                    // cache that cannot be changed (read-only) keeps it: still a miss.
                    try {
                        change_shard(directory_fd_, directory_, shard, folder.fd,
                                     [&](detail::ShardCounter& counter) {
                                         if (!remove_if_same_file(folder.fd, name, file.fd))
                                             return;
                                         counter = count_listing(list_directory(
                                             folder.fd, shard_path(directory_, shard), false));
                                     });
                    } catch (const CacheError&) {
                    }
                }
            }
            ++corrupt_;
            ++misses_;
            detail::count_tier_event(CacheTier::disk, TierEvent::miss);
            detail::count_tier_event(CacheTier::disk, TierEvent::failure);
            return std::nullopt;
        case Outcome::hit:
            break;
    }
    // Mark as recently used for eviction; failure only makes eviction less accurate.
    ::futimens(file.fd, nullptr);
    if (flat) {
        // Moved into its shard, where it is counted; if that fails it stays where it was found.
        try {
            FileDescriptor target(open_shard_for_store(directory_fd_, directory_, shard));
            struct stat info {};
            if (target.fd >= 0 && ::fstat(file.fd, &info) == 0) {
                change_shard(directory_fd_, directory_, shard, target.fd,
                             [&](detail::ShardCounter& counter) {
                                 if (::renameat2(directory_fd_, name.c_str(), target.fd,
                                                 name.c_str(), RENAME_NOREPLACE) != 0) {
                                     if (errno == EEXIST)
                                         ::unlinkat(directory_fd_, name.c_str(), 0);
                                     return;
                                 }
                                 if (counter.entries == 0) counter.oldest_ns = now_nanoseconds();
                                 counter.bytes = detail::saturating_add(
                                     counter.bytes, static_cast<std::uint64_t>(info.st_size));
                                 ++counter.entries;
                             });
            }
        } catch (const CacheError&) {
        }
    }
    ++hits_;
    detail::count_tier_event(CacheTier::disk, TierEvent::hit);
    return std::move(read.code);
}

void DiskProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const detail::NvtxRange range("cache put disk");
    const std::string bytes = encode_entry(key, code);
    if (bytes.size() > max_bytes_) return;  // would never fit
    const unsigned shard = shard_of(key);
    const std::string name = entry_name(key);
    auto failed = [&](const char* what) {
        ++failed_stores_;
        detail::count_tier_event(detail::CacheTier::disk, detail::TierEvent::failure);
        return CacheError("DiskProgramCache::put of '" + code.name() + "' (" +
                          std::string(to_string(code.code_type())) + ", " +
                          std::to_string(bytes.size()) + " bytes) as " + key.hex() + ": " + what);
    };
    bool written = false;  // the entry is in place: nothing after that fails the put
    try {
        // Something other than a folder under the shard's name is replaced by one (a warning).
        FileDescriptor folder(open_shard_for_store(directory_fd_, directory_, shard));
        if (folder.fd < 0) fail("open shard folder", shard_path(directory_, shard), errno);
        // Under the shard's lock, with its counter marked dirty: killed anywhere in here, the
        // next holder recounts the shard.
        change_shard(
            directory_fd_, directory_, shard, folder.fd, [&](detail::ShardCounter& counter) {
                struct stat old {};
                const bool replacing =
                    ::fstatat(folder.fd, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(old.st_mode);
                detail::write_file_atomically_at(folder.fd, name, bytes, 0600, entry_path(key));
                written = true;
                if (replacing) {
                    counter.bytes -= std::min<std::uint64_t>(counter.bytes, old.st_size);
                } else {
                    if (counter.entries == 0) counter.oldest_ns = now_nanoseconds();
                    ++counter.entries;
                }
                counter.bytes = detail::saturating_add(counter.bytes, bytes.size());
            });
    } catch (const std::exception& e) {
        // Stored, but its counter could not be written back: it stays dirty, and the next
        // holder of its lock recounts the shard.
        if (!written) {
            if (dynamic_cast<const std::system_error*>(&e) != nullptr ||
                dynamic_cast<const CacheError*>(&e) != nullptr)
                throw failed(e.what());
            throw;
        }
        warn(WarningKind::disk_cache_repaired,
             "DiskProgramCache: counting entry " + key.hex() + " in '" +
                 shard_path(directory_, shard).string() + "' failed (recounted later): " + e.what());
    }
    ++insertions_;
    detail::count_tier_event(detail::CacheTier::disk, detail::TierEvent::store);
    try {
        evictions_ += evict_after_put(directory_fd_, directory_, max_bytes_);
    } catch (...) {
        // Reported by evict_after_put where it could be; the entry is stored.
    }
}

std::uint64_t DiskProgramCache::prune(std::uint64_t max_bytes) {
    return prune_and_repair(max_bytes).removed;
}

DiskProgramCache::PruneReport DiskProgramCache::prune_and_repair(std::uint64_t max_bytes) {
    PruneReport report;
    const fs::path counters_path = directory_ / detail::shard_counters_name;
    {
        // The counters file whole again (missing, cut short, not a regular file).
        struct stat info {};
        const std::string counters(detail::shard_counters_name);
        if (::fstatat(directory_fd_, counters.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) fail("fstatat", counters_path, errno);
            detail::ensure_shard_table(directory_fd_, directory_);
            report.repaired.push_back("'" + counters_path.string() +
                                      "' was missing: made again, every shard recounted");
        } else if (!S_ISREG(info.st_mode)) {
            detail::ensure_shard_table(directory_fd_, directory_);  // throws if it cannot
            report.repaired.push_back("'" + counters_path.string() + "' was " +
                                      std::string(detail::file_kind(info.st_mode)) +
                                      ": replaced, every shard recounted");
        } else if (static_cast<std::uint64_t>(info.st_size) < detail::shard_table_bytes) {
            detail::ensure_shard_table(directory_fd_, directory_);
            report.repaired.push_back("'" + counters_path.string() +
                                      "' was cut short: made whole, every shard recounted");
        }
    }
    auto note = [&](const ShardRepair& repair) {
        if (!repair.damaged) return;
        (repair.removed ? report.repaired : report.skipped).push_back(repair.message);
    };
    // Shard names that hold something other than a folder, replaced before entries of the flat
    // layout are moved into them.
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        struct stat info {};
        const std::string name(detail::shard_folder_name(shard));
        if (::fstatat(directory_fd_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            S_ISDIR(info.st_mode))
            continue;
        detail::ShardLock lock(directory_fd_, directory_, shard);
        note(remove_non_folder(directory_fd_, directory_, shard, lock));
    }
    migrate_flat_entries(directory_fd_, directory_);
    // Every shard recounted (its counter repaired, stale temporaries removed), and the age and
    // size of every entry gathered (16 bytes an entry) to find the age below which entries go.
    // A shard that cannot be listed is skipped and named: its entries are neither counted nor
    // removed, its counter is left as it is.
    std::vector<std::pair<std::int64_t, std::uint64_t>> ages;
    std::uint64_t total = 0;
    std::bitset<detail::shard_count> usable;
    auto skip = [&](unsigned shard, const std::string& why) {
        report.skipped.push_back("'" + shard_path(directory_, shard).string() +
                                 "' cannot be listed (" + why +
                                 "): skipped, its entries neither counted nor removed");
    };
    // The shard's folder under `lock`, or -1 when it has none (its counter then set to empty).
    auto open_locked = [&](unsigned shard, detail::ShardLock& lock) {
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
    };
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        detail::ShardLock lock(directory_fd_, directory_, shard);
        FileDescriptor folder(open_locked(shard, lock));
        if (folder.fd < 0) continue;
        lock.write(lock.read(), true);
        DirectoryListing listing;
        try {
            listing = list_directory(folder.fd, shard_path(directory_, shard), true);
        } catch (const CacheError& e) {
            skip(shard, e.what());  // left dirty: recounted by its next holder
            continue;
        }
        const detail::ShardCounter counter = count_listing(listing);
        for (const auto& entry : listing.entries)
            ages.emplace_back(nanoseconds(entry.modified), entry.size);
        total = detail::saturating_add(total, counter.bytes);
        lock.write(counter, false);
        usable.set(shard);
    }
    if (total <= max_bytes) return report;
    std::sort(ages.begin(), ages.end());
    // Entries used before `cutoff` go, and `at_cutoff` of those used at that very instant.
    std::int64_t cutoff = 0;
    std::uint64_t at_cutoff = 0, left = total;
    for (const auto& [age, size] : ages) {
        if (left <= max_bytes) break;
        if (age != cutoff) at_cutoff = 0;
        cutoff = age;
        ++at_cutoff;
        left -= std::min(left, size);
    }
    std::uint64_t removed = 0;
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        if (!usable[shard]) continue;
        detail::ShardLock lock(directory_fd_, directory_, shard);
        FileDescriptor folder(open_shard(directory_fd_, shard, false));
        if (folder.fd < 0) {
            if (errno == ENOENT || not_a_folder(errno)) lock.write({}, false);  // damaged since
            continue;
        }
        lock.write(lock.read(), true);
        try {
            DirectoryListing listing =
                list_directory(folder.fd, shard_path(directory_, shard), true);
            std::sort(listing.entries.begin(), listing.entries.end(), older);
            for (const auto& entry : listing.entries) {
                const std::int64_t age = nanoseconds(entry.modified);
                if (age > cutoff || (age == cutoff && at_cutoff == 0)) break;
                if (age == cutoff) --at_cutoff;
                if (::unlinkat(folder.fd, entry.name.c_str(), 0) == 0) ++removed;
            }
            lock.write(
                count_listing(list_directory(folder.fd, shard_path(directory_, shard), false)),
                false);
        } catch (const CacheError& e) {
            skip(shard, e.what());
        }
    }
    evictions_ += removed;
    report.removed = removed;
    return report;
}

void DiskProgramCache::clear() {
    {
        // The flat layout's entries, and stale temporary files of the top folder.
        DirectoryLock lock(directory_fd_, directory_, LOCK_EX);
        const DirectoryListing listing = list_directory(directory_fd_, directory_, true);
        for (const auto& entry : listing.entries) ::unlinkat(directory_fd_, entry.name.c_str(), 0);
    }
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        FileDescriptor folder(open_shard(directory_fd_, shard, false));
        if (folder.fd < 0) {
            if (not_a_folder(errno)) {  // damage: replaced, and the shard counted empty
                detail::ShardLock lock(directory_fd_, directory_, shard);
                report(remove_non_folder(directory_fd_, directory_, shard, lock));
            }
            continue;
        }
        change_shard(directory_fd_, directory_, shard, folder.fd, [&](detail::ShardCounter& c) {
            const DirectoryListing listing =
                list_directory(folder.fd, shard_path(directory_, shard), true);
            for (const auto& entry : listing.entries) ::unlinkat(folder.fd, entry.name.c_str(), 0);
            c = count_listing(list_directory(folder.fd, shard_path(directory_, shard), false));
        });
    }
}

CacheStats DiskProgramCache::stats() const {
    CacheStats stats;
    stats.hits = hits_;
    stats.misses = misses_;
    stats.insertions = insertions_;
    stats.evictions = evictions_;
    stats.corrupt_entries = corrupt_;
    stats.failed_stores = failed_stores_;
    stats.max_bytes = max_bytes_;
    // Entries of the flat layout, temporary files in the top folder, and shard names that hold
    // something other than a folder (damage: no entries there, whatever their counter says).
    const DirectoryListing listing = list_directory(directory_fd_, directory_, false);
    // The shards' counters; a dirty or impossible one is recounted (and repaired, where the
    // cache can be written) first. Without a counters file (a cache of the flat layout only,
    // looked at by maintenance, or one whose file was dropped), shard folders that exist are
    // counted from listings, and nothing is created.
    const std::optional<detail::ShardTable> table =
        detail::read_shard_table(directory_fd_, directory_);
    for (unsigned shard = 0; shard < detail::shard_count; ++shard) {
        if (listing.not_folders[shard]) continue;
        detail::ShardCounter counter =
            table ? (*table)[shard] : detail::ShardCounter{0, 0, 0, false};
        if (!counter.clean)
            counter = recount_shard(directory_fd_, directory_, shard, table.has_value());
        stats.entries = detail::saturating_add(stats.entries, counter.entries);
        stats.bytes = detail::saturating_add(stats.bytes, counter.bytes);
    }
    for (const auto& entry : listing.entries) {
        ++stats.entries;
        stats.bytes = detail::saturating_add(stats.bytes, entry.size);
    }
    stats.temporary_files = listing.temporary_files;
    stats.bytes = detail::saturating_add(stats.bytes, listing.temporary_bytes);
    return stats;
}

std::uint64_t DiskProgramCache::flat_entries() const {
    return list_directory(directory_fd_, directory_, false).entries.size();
}

fs::path default_cache_directory() {
    auto absolute_variable = [](const char* name) -> std::optional<fs::path> {
        const char* value = std::getenv(name);
        if (value == nullptr || *value == '\0' || value[0] != '/') return std::nullopt;
        return fs::path(value);
    };
    if (const char* dir = std::getenv("CUDACORE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
        // Relative paths are refused like relative XDG_CACHE_HOME / HOME values: the cache would
        // move with the working directory, and could land in a directory others control.
        if (dir[0] != '/') {
            throw CacheError(std::string("default_cache_directory: CUDACORE_CACHE_DIR='") + dir +
                             "' is a relative path; set it to an absolute path");
        }
        return fs::path(dir);
    }
    if (auto dir = absolute_variable("XDG_CACHE_HOME")) return *dir / "cudacore";
    if (auto home = absolute_variable("HOME")) return *home / ".cache" / "cudacore";
    throw CacheError(
        "default_cache_directory: none of CUDACORE_CACHE_DIR, XDG_CACHE_HOME or HOME is set to an "
        "absolute path");
}

bool cache_disabled_by_environment() noexcept {
    const char* value = std::getenv("CUDACORE_DISABLE_CACHE");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

std::unique_ptr<ProgramCache> open_default_program_cache(std::uint64_t max_bytes) {
    if (cache_disabled_by_environment()) return nullptr;
    return std::make_unique<DiskProgramCache>(default_cache_directory(), max_bytes);
}

}  // namespace cudacore
