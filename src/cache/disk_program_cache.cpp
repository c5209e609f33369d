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
#include <new>
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

// Names the cache writes: entries, their temporaries, the lock and the marker.
bool is_cache_name(std::string_view name) {
    return is_entry_name(name) || is_cache_temporary(name) || name == lock_name ||
           name == marker_name;
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
        if (::fstatat(directory_fd, item->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(info.st_mode))
            continue;
        const auto size = static_cast<std::uint64_t>(info.st_size);
        if (is_entry_name(name)) {
            listing.entries.push_back({std::string(name), size, info.st_mtim});
        } else if (is_cache_temporary(name)) {
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
    // Bounded before reading: nothing larger than this cache writes is read (a junk file of
    // gigabytes where an entry belongs costs one fstat, not its size in memory).
    const auto size = static_cast<std::uint64_t>(info.st_size);
    const std::uint64_t format_limit = entry_header_size + ObjectCode::max_serialized_size;
    if (S_ISREG(info.st_mode) && size > std::min(max_bytes_, format_limit)) {
        if (size > format_limit) {  // no cache writes that: junk
            remove_if_same_file(directory_fd_, name, file.fd);
            ++corrupt_;
        }  // else a cache with a larger bound may have written it: left to that one
        ++misses_;
        return std::nullopt;
    }
    std::string bytes;
    bool readable = S_ISREG(info.st_mode);
    if (readable) {
        try {
            bytes = detail::read_open_file_bounded(file.fd, path, std::min(max_bytes_, format_limit));
        } catch (const std::length_error&) {
            readable = false;  // grew past any entry's size since the fstat above
        } catch (const std::bad_alloc&) {
            ++misses_;  // no memory for it now: a miss, the entry stays
            return std::nullopt;
        } catch (const std::system_error& e) {
            throw CacheError(std::string("DiskProgramCache: ") + e.what());
        }
    }
    std::optional<ObjectCode> code;
    if (readable) {
        try {
            code = decode_entry(bytes, key);
        } catch (const SerializationError&) {
        } catch (const std::bad_alloc&) {
            ++misses_;
            return std::nullopt;
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
