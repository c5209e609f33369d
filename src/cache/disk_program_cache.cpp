#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"

#include "support/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace cudacore {
namespace {

namespace fs = std::filesystem;

constexpr std::array<char, 8> entry_magic = {'C', 'C', 'E', 'N', 'T', 'R', 'Y', '\n'};
constexpr std::size_t entry_header_size = entry_magic.size() + 32;
constexpr std::string_view entry_extension = ".ccentry";

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
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// Holds an flock on <dir>/.lock for the lifetime of the object.
class DirectoryLock {
public:
    DirectoryLock(int directory_fd, const fs::path& directory, int operation) {
        const fs::path path = directory / ".lock";
        file_.fd = ::openat(directory_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (file_.fd < 0) fail("open lock file", path, errno);
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
// into place). A writer in another pid namespace may look gone: removing its temporary file makes
// its store fail, which the compile survives.
bool writer_is_gone(std::string_view name) {
    const auto pid = detail::atomic_write_temporary_writer(name);
    if (!pid) return true;  // not one of ours: left by an older version, or planted
    return ::kill(*pid, 0) != 0 && errno == ESRCH;
}

struct DirectoryListing {
    std::vector<EntryFile> entries;
    std::uint64_t temporary_bytes = 0;  // temporary files still there (being written, or left)
    std::uint64_t temporary_files = 0;
};

// Every entry file of the directory open as `directory_fd`, and the temporary files. When asked,
// removes temporaries whose writer is gone or that are older than the limit.
DirectoryListing list_directory(int directory_fd, const fs::path& directory,
                                bool remove_stale_temporaries) {
    // fdopendir takes the descriptor it is given: list through a duplicate (rewound, since
    // duplicates share one position).
    const int listing_fd = ::fcntl(directory_fd, F_DUPFD_CLOEXEC, 0);
    if (listing_fd < 0) fail("dup", directory, errno);
    DIR* dir = ::fdopendir(listing_fd);
    if (dir == nullptr) {
        const int error = errno;
        ::close(listing_fd);
        fail("opendir", directory, error);
    }
    ::rewinddir(dir);
    DirectoryListing listing;
    const auto now = std::chrono::system_clock::now();
    for (;;) {
        errno = 0;  // readdir returns nullptr at the end and on error; only errno tells them apart
        const dirent* item = ::readdir(dir);
        if (item == nullptr) break;
        const std::string_view name = item->d_name;
        struct stat info {};
        if (::fstatat(directory_fd, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(info.st_mode))
            continue;
        const auto size = static_cast<std::uint64_t>(info.st_size);
        if (name.size() == 64 + entry_extension.size() && name.ends_with(entry_extension)) {
            listing.entries.push_back({std::string(name), size, info.st_mtim});
        } else if (detail::is_atomic_write_temporary(name)) {
            const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
            if (remove_stale_temporaries &&
                (writer_is_gone(name) || now - modified > DiskProgramCache::stale_temporary_age) &&
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
void remove_if_same_file(int directory_fd, const std::string& name, int opened) {
    struct stat read_info {}, current {};
    if (::fstat(opened, &read_info) != 0 ||
        ::fstatat(directory_fd, name.c_str(), &current, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (read_info.st_dev == current.st_dev && read_info.st_ino == current.st_ino)
        ::unlinkat(directory_fd, name.c_str(), 0);
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

}  // namespace

DiskProgramCache::DiskProgramCache(fs::path directory, std::uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {
    if (directory_.empty()) throw CacheError("DiskProgramCache: empty directory path");
    directory_ = directory_.lexically_normal();
    if (directory_.has_filename() == false) directory_ = directory_.parent_path();
    if (const fs::path parent = directory_.parent_path(); !parent.empty()) {
        std::error_code error;
        fs::create_directories(parent, error);
        if (error) fail("create parent directory", parent, error.value());
    }
    if (::mkdir(directory_.c_str(), 0700) != 0 && errno != EEXIST) fail("mkdir", directory_, errno);
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
    const std::string name = entry_name(key);
    const fs::path path = directory_ / name;
    // Non-blocking: a FIFO planted where the entry belongs must not hang the read.
    FileDescriptor file(
        ::openat(directory_fd_, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (file.fd < 0) {
        if (errno == ENOENT) {
            ++misses_;
            return std::nullopt;
        }
        if (errno == ELOOP) {  // a symlink was put where an entry belongs: never follow it
            ::unlinkat(directory_fd_, name.c_str(), 0);
            ++corrupt_;
            ++misses_;
            return std::nullopt;
        }
        fail("open", path, errno);
    }
    struct stat info {};
    if (::fstat(file.fd, &info) != 0) fail("fstat", path, errno);
    std::string bytes;
    bool readable = S_ISREG(info.st_mode) &&
                    static_cast<std::uint64_t>(info.st_size) <= entry_header_size + ObjectCode::max_serialized_size;
    if (readable) {
        try {
            bytes = detail::read_open_file_bounded(file.fd, path,
                                                   entry_header_size + ObjectCode::max_serialized_size);
        } catch (const std::length_error&) {
            readable = false;  // grew past any entry's size since the fstat above
        } catch (const std::system_error& e) {
            throw CacheError(std::string("DiskProgramCache: ") + e.what());
        }
    }
    std::optional<ObjectCode> code;
    if (readable) {
        try {
            code = decode_entry(bytes, key);
        } catch (const SerializationError&) {
        }
    }
    if (!code) {
        // A directory there is left alone (it may hold a tree someone put there by mistake):
        // it just stays a miss, and the next put fails and is reported.
        if (!S_ISDIR(info.st_mode)) remove_if_same_file(directory_fd_, name, file.fd);
        ++corrupt_;
        ++misses_;
        return std::nullopt;
    }
    // Mark as recently used for eviction; failure only makes eviction less accurate.
    ::futimens(file.fd, nullptr);
    ++hits_;
    return code;
}

void DiskProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const std::string bytes = encode_entry(key, code);
    if (bytes.size() > max_bytes_) return;  // would never fit
    try {
        detail::write_file_atomically_at(directory_fd_, entry_name(key), bytes, 0600,
                                         entry_path(key));
    } catch (const std::system_error& e) {
        ++failed_stores_;
        throw CacheError("DiskProgramCache::put of '" + code.name() + "' (" +
                         std::string(to_string(code.code_type())) + ", " +
                         std::to_string(bytes.size()) + " bytes) as " + key.hex() + ": " + e.what());
    }
    ++insertions_;
    const DirectoryListing listing = list_directory(directory_fd_, directory_, false);
    std::uint64_t total = listing.temporary_bytes;
    for (const auto& entry : listing.entries) total += entry.size;
    if (total > max_bytes_) evictions_ += evict_to(max_bytes_);
}

std::uint64_t DiskProgramCache::evict_to(std::uint64_t bound) {
    DirectoryLock lock(directory_fd_, directory_, LOCK_EX);
    DirectoryListing listing = list_directory(directory_fd_, directory_, true);
    // Temporary files still being written count against the bound: entries make room for them.
    std::uint64_t total = listing.temporary_bytes;
    for (const auto& entry : listing.entries) total += entry.size;
    std::sort(listing.entries.begin(), listing.entries.end(), older);
    std::uint64_t removed = 0;
    for (const auto& entry : listing.entries) {
        if (total <= bound) break;
        if (::unlinkat(directory_fd_, entry.name.c_str(), 0) == 0) ++removed;
        total -= entry.size;  // gone either way (another process may have removed it)
    }
    return removed;
}

std::uint64_t DiskProgramCache::prune(std::uint64_t max_bytes) {
    const std::uint64_t removed = evict_to(max_bytes);
    evictions_ += removed;
    return removed;
}

void DiskProgramCache::clear() { evict_to(0); }

CacheStats DiskProgramCache::stats() const {
    CacheStats stats;
    stats.hits = hits_;
    stats.misses = misses_;
    stats.insertions = insertions_;
    stats.evictions = evictions_;
    stats.corrupt_entries = corrupt_;
    stats.failed_stores = failed_stores_;
    stats.max_bytes = max_bytes_;
    const DirectoryListing listing = list_directory(directory_fd_, directory_, false);
    for (const auto& entry : listing.entries) {
        ++stats.entries;
        stats.bytes += entry.size;
    }
    stats.temporary_files = listing.temporary_files;
    stats.bytes += listing.temporary_bytes;
    return stats;
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
