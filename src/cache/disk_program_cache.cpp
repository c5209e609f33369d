#include "cudacore/disk_program_cache.hpp"

#include "cudacore/errors.hpp"

#include "support/atomic_file.hpp"

#include <fcntl.h>
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
    DirectoryLock(const fs::path& directory, int operation) {
        const fs::path path = directory / ".lock";
        file_.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (file_.fd < 0) fail("open lock file", path, errno);
        while (::flock(file_.fd, operation) != 0) {
            if (errno != EINTR) fail("flock", path, errno);
        }
    }

private:
    FileDescriptor file_;
};

struct EntryFile {
    fs::path path;
    std::uint64_t size;
    struct timespec modified;
};

bool older(const EntryFile& a, const EntryFile& b) {
    if (a.modified.tv_sec != b.modified.tv_sec) return a.modified.tv_sec < b.modified.tv_sec;
    return a.modified.tv_nsec < b.modified.tv_nsec;
}

// Every entry file of the directory, and (when asked) removes temporaries older than the limit.
std::vector<EntryFile> list_entries(const fs::path& directory, bool remove_stale_temporaries) {
    std::vector<EntryFile> entries;
    std::error_code error;
    const auto now = std::chrono::system_clock::now();
    for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        struct stat info {};
        if (::lstat(it->path().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
        if (name.size() == 64 + entry_extension.size() && name.ends_with(entry_extension)) {
            entries.push_back({it->path(), static_cast<std::uint64_t>(info.st_size), info.st_mtim});
        } else if (remove_stale_temporaries && detail::is_atomic_write_temporary(name)) {
            const auto modified = std::chrono::system_clock::from_time_t(info.st_mtim.tv_sec);
            if (now - modified > DiskProgramCache::stale_temporary_age) ::unlink(it->path().c_str());
        }
    }
    if (error) fail("list", directory, error.value());
    return entries;
}

// Removes `path` only if it is still the file `opened` refers to: another process may have
// renamed a fresh, valid entry over the bad one since we read it.
void remove_if_same_file(const fs::path& path, int opened) {
    struct stat read_info {}, current {};
    if (::fstat(opened, &read_info) != 0 || ::lstat(path.c_str(), &current) != 0) return;
    if (read_info.st_dev == current.st_dev && read_info.st_ino == current.st_ino) ::unlink(path.c_str());
}

void check_private_directory(const fs::path& directory) {
    struct stat info {};
    if (::stat(directory.c_str(), &info) != 0) fail("stat", directory, errno);
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
    check_private_directory(directory_);
}

fs::path DiskProgramCache::entry_path(const CacheKey& key) const {
    return directory_ / (key.hex() + std::string(entry_extension));
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
    const fs::path path = entry_path(key);
    FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (file.fd < 0) {
        if (errno == ENOENT) {
            ++misses_;
            return std::nullopt;
        }
        if (errno == ELOOP) {  // a symlink was put where an entry belongs: never follow it
            ::unlink(path.c_str());
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
        bytes.resize(static_cast<std::size_t>(info.st_size));
        std::size_t done = 0;
        while (done < bytes.size()) {
            ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) fail("read", path, errno);
            if (got == 0) break;
            done += static_cast<std::size_t>(got);
        }
        bytes.resize(done);
    }
    std::optional<ObjectCode> code;
    if (readable) {
        try {
            code = decode_entry(bytes, key);
        } catch (const SerializationError&) {
        }
    }
    if (!code) {
        remove_if_same_file(path, file.fd);
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
    const fs::path path = entry_path(key);
    try {
        detail::write_file_atomically(path, bytes, 0600);
    } catch (const std::system_error& e) {
        throw CacheError("DiskProgramCache::put of '" + code.name() + "' (" +
                         std::string(to_string(code.code_type())) + ", " +
                         std::to_string(bytes.size()) + " bytes) as " + key.hex() + ": " + e.what());
    }
    ++insertions_;
    std::uint64_t total = 0;
    for (const auto& entry : list_entries(directory_, false)) total += entry.size;
    if (total > max_bytes_) evictions_ += evict_to(max_bytes_);
}

std::uint64_t DiskProgramCache::evict_to(std::uint64_t bound) {
    DirectoryLock lock(directory_, LOCK_EX);
    std::vector<EntryFile> entries = list_entries(directory_, true);
    std::uint64_t total = 0;
    for (const auto& entry : entries) total += entry.size;
    std::sort(entries.begin(), entries.end(), older);
    std::uint64_t removed = 0;
    for (const auto& entry : entries) {
        if (total <= bound) break;
        if (::unlink(entry.path.c_str()) == 0) ++removed;
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
    stats.max_bytes = max_bytes_;
    for (const auto& entry : list_entries(directory_, false)) {
        ++stats.entries;
        stats.bytes += entry.size;
    }
    return stats;
}

fs::path default_cache_directory() {
    auto absolute_variable = [](const char* name) -> std::optional<fs::path> {
        const char* value = std::getenv(name);
        if (value == nullptr || *value == '\0' || value[0] != '/') return std::nullopt;
        return fs::path(value);
    };
    if (const char* dir = std::getenv("CUDACORE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
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
