// Opening a DiskProgramCache: its directory created, opened once and checked (private, not a
// symbolic link, not `/`, marked as cudacore's), its shard counters made whole; and where the
// default cache lives.
#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"

#include "cache/disk/disk_program_cache_entry.hpp"
#include "cache/disk/disk_files.hpp"
#include "cache/disk/shard_counters.hpp"
#include "code/compiler_identity.hpp"
#include "support/private_folder.hpp"
#include "support/atomic_file.hpp"
#include "support/input_file.hpp"
#include "support/cache_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <system_error>
#include <thread>

namespace cudacore {

namespace detail::disk {
namespace {

namespace fs = std::filesystem;

// The cache's own marker, in the Cache Directory Tagging format (backup tools skip the folder);
// the second line makes it cudacore's: only a folder that carries it is maintained (cleared,
// pruned) as a cache.
constexpr std::string_view marker_signature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr std::string_view marker_owner = "# This directory is a cudacore program cache.\n";
constexpr std::string_view marker_text =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This directory is a cudacore program cache.\n"
    "# Its entries (<64 hex digits>.ccentry) are removed by `cudacore cache clear`; other files "
    "are left alone.\n";

// Names the cache writes in its top folder: the shard folders and their counters, the marker
// and its temporaries, the lock file caches of earlier versions hold, and the folder of header
// bundles written out for compiles (support/cache_directory.hpp).
bool is_top_folder_name(std::string_view name) {
    return is_cache_temporary(name) || name == ".lock" || name == marker_name ||
           name == kHeaderBundleFolders || name == kCompilerBuildsFile ||
           name == kOlderCompilerVersionsFile ||
           name == shard_counters_name || is_shard_folder_name(name);
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
        text = read_open_file_bounded(file.fd, directory / marker_name, 4096);
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
        if (name == "." || name == ".." || is_top_folder_name(name)) continue;
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

// Maintenance only touches a folder the cache marked. A new folder, or one holding nothing but
// what a cache writes (made before the marker existed), is marked when the cache is created.
void check_or_mark(int directory_fd, const fs::path& directory, bool creating) {
    if (has_own_marker(directory_fd, directory)) return;
    if (!creating) {
        throw CacheError("DiskProgramCache: refusing '" + directory.string() +
                         "': it is not a cudacore cache (no " + std::string(marker_name) +
                         " of cudacore's; a compile through the cache marks a cache it "
                         "creates or one that holds only cache entries)");
    }
    if (const std::string foreign = foreign_name(directory_fd, directory); !foreign.empty()) {
        throw CacheError("DiskProgramCache: refusing '" + directory.string() +
                         "': it is not a cudacore cache (it holds '" + foreign + "' and no " +
                         std::string(marker_name) +
                         " of cudacore's); point the cache at a new or empty folder");
    }
    try {
        write_file_atomically_at(directory_fd, std::string(marker_name), marker_text, 0600,
                                 directory / marker_name);
    } catch (const std::system_error& e) {
        throw CacheError(std::string("DiskProgramCache: marking the cache: ") + e.what());
    }
}

// Makes the shards' counters whole when they are missing, cut short or not a regular file (a new
// cache, or one whose .shards a backup or sync tool dropped: shards with a folder are then
// recounted before they are trusted). A shard folder is created with its first entry.
void prepare_shard_counters(int directory_fd, const fs::path& directory) {
    struct stat info {};
    const std::string counters(shard_counters_name);
    if (::fstatat(directory_fd, counters.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(info.st_mode) || static_cast<std::uint64_t>(info.st_size) < shard_table_bytes)
        ensure_shard_table(directory_fd, directory);
}

// The directory, opened once and never through a symlink, through a path only this user and root
// can change (support/private_folder.hpp): every later operation is relative to this descriptor,
// so swapping the path or a folder above it after the check redirects nothing. The directory's
// own owner and mode are checked by check_private_directory, with words of their own.
int open_cache_directory(const fs::path& directory) {
    std::error_code ignored;
    const fs::path absolute = fs::absolute(directory, ignored);
    PrivateFolder opened = open_private_folder(absolute, false);
    if (opened.fd >= 0) return opened.fd;
    struct stat info {};
    if (::lstat(directory.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
        throw CacheError("DiskProgramCache: refusing cache directory '" + directory.string() +
                         "': it is a symbolic link; point the cache at the real directory");
    }
    // The directory itself is missing or not this user's alone: opened to say so in its words.
    std::string named = absolute.string();
    named.insert(0, 1, '\'').append("' ");
    if (opened.problem.starts_with(named) || opened.problem.starts_with("open " + named)) {
        const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) return fd;
        fail("open", directory, errno);
    }
    throw CacheError("DiskProgramCache: refusing cache directory '" + directory.string() + "': " +
                     opened.problem + ", so another user could redirect it and plant code that "
                     "would run on your GPU");
}

// Creates the directory (mode 0700) and its missing parents (the default mode).
void create_cache_directory(const fs::path& directory) {
    if (const fs::path parent = directory.parent_path(); !parent.empty()) {
        std::error_code error;
        fs::create_directories(parent, error);
        if (error) fail("create parent directory", parent, error.value());
    }
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) fail("mkdir", directory, errno);
}

// Whether the folder looks like a cache another process is creating right now: changed in the
// last seconds, no marker yet, and nothing in it but the marker's temporary file (a cache is made
// as mkdir, then its marker, written under a temporary name and renamed into place). False when
// it cannot be listed.
bool being_created(const fs::path& directory) {
    const FileDescriptor folder(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat info {};
    if (folder.fd < 0 || ::fstat(folder.fd, &info) != 0) return false;
    constexpr std::int64_t recent_ns = 10'000'000'000;
    const std::int64_t changed_ns = std::int64_t{info.st_ctim.tv_sec} * 1'000'000'000 + info.st_ctim.tv_nsec;
    if (now_nanoseconds() - changed_ns > recent_ns) return false;
    DIR* dir = ::fdopendir(::dup(folder.fd));
    if (dir == nullptr) return false;
    bool creating = true;
    while (const dirent* item = ::readdir(dir)) {
        const std::string_view name = item->d_name;
        if (name == "." || name == "..") continue;
        if (name == marker_name || !is_cache_temporary(name) ||
            !name.starts_with("." + std::string(marker_name))) {
            creating = false;
            break;
        }
    }
    ::closedir(dir);
    return creating;
}

// Waits, up to a bound, while another process creates a cache in `directory` (then it is opened,
// or refused if the marker never came).
void wait_while_created(const fs::path& directory) {
    // Making a cache is a mkdir and a small atomic write (one fsync): milliseconds, seconds on a
    // file system under heavy load.
    constexpr auto bound = std::chrono::seconds(2);
    const auto until = std::chrono::steady_clock::now() + bound;
    while (being_created(directory) && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Whether the folder holds the header bundle folders and nothing else: compiles with header
// bundles made it, and none went through the program cache yet.
bool holds_only_bundle_folders(const fs::path& directory) {
    std::error_code error;
    bool bundles = false;
    for (const auto& entry : fs::directory_iterator(directory, error)) {
        if (entry.path().filename() != kHeaderBundleFolders) return false;
        bundles = true;
    }
    return bundles && !error;
}

}  // namespace
}  // namespace detail::disk

DiskProgramCache::DiskProgramCache(std::filesystem::path directory, std::uint64_t max_bytes)
    : DiskProgramCache(std::move(directory), max_bytes, Opening::create) {}

std::unique_ptr<DiskProgramCache> DiskProgramCache::open_existing(std::filesystem::path directory,
                                                                  std::uint64_t max_bytes) {
    struct stat info {};
    if (::lstat(directory.c_str(), &info) != 0 && errno == ENOENT) return nullptr;
    if (detail::disk::holds_only_bundle_folders(directory)) return nullptr;
    // A cache another process is making now: waited for, not refused for its missing marker.
    detail::disk::wait_while_created(directory);
    return std::unique_ptr<DiskProgramCache>(
        new DiskProgramCache(std::move(directory), max_bytes, Opening::existing));
}

DiskProgramCache::DiskProgramCache(std::filesystem::path directory, std::uint64_t max_bytes,
                                   Opening opening)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {
    namespace disk = detail::disk;
    if (directory_.empty()) throw CacheError("DiskProgramCache: empty directory path");
    directory_ = directory_.lexically_normal();
    if (directory_.has_filename() == false) directory_ = directory_.parent_path();
    if (opening == Opening::create) disk::create_cache_directory(directory_);
    directory_fd_ = disk::open_cache_directory(directory_);
    try {
        disk::check_private_directory(directory_fd_, directory_);
        disk::refuse_root(directory_fd_, directory_);
        disk::check_or_mark(directory_fd_, directory_, opening == Opening::create);
        if (opening == Opening::create) disk::prepare_shard_counters(directory_fd_, directory_);
        // A folder checked private keeps what this process learns of its compilers' versions.
        detail::keep_compiler_versions_in(directory_);
    } catch (...) {
        ::close(directory_fd_);
        throw;
    }
}

DiskProgramCache::~DiskProgramCache() { ::close(directory_fd_); }

std::filesystem::path default_cache_directory() {
    const detail::CacheDirectory found = detail::cache_directory_from_environment();
    if (!found.problem.empty()) throw CacheError("default_cache_directory: " + found.problem);
    return found.path;
}

bool cache_disabled_by_environment() noexcept { return detail::cache_disabled_in_environment(); }

std::unique_ptr<ProgramCache> open_default_program_cache(std::uint64_t max_bytes) {
    if (cache_disabled_by_environment()) return nullptr;
    return std::make_unique<DiskProgramCache>(default_cache_directory(), max_bytes);
}

}  // namespace cudacore
