#include "cache/disk/shard_counters.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "support/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

namespace cudacore::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t slot_size = 64;
constexpr std::size_t table_size = slot_size * shard_count;

[[noreturn]] void fail(const std::string& what, const fs::path& path, int error) {
    throw CacheError("DiskProgramCache: " + what + " '" + path.string() + "' failed: " +
                     std::strerror(error));
}

constexpr std::array<char, 2 * shard_count> hex_pairs = [] {
    std::array<char, 2 * shard_count> pairs{};
    constexpr char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < shard_count; ++i) {
        pairs[2 * i] = digits[i >> 4];
        pairs[2 * i + 1] = digits[i & 15];
    }
    return pairs;
}();

std::array<char, slot_size> format_slot(unsigned shard, const ShardCounter& counter, bool dirty) {
    std::array<char, slot_size> slot;
    slot.fill(' ');
    char text[slot_size + 1];
    const int length =
        std::snprintf(text, sizeof text, "%.2s %20" PRIu64 " %12" PRIu64 " %20" PRId64 " %c",
                      &hex_pairs[2 * shard], counter.bytes, counter.entries, counter.oldest_ns,
                      dirty ? 'd' : 'c');
    std::memcpy(slot.data(), text, static_cast<std::size_t>(length));
    slot[slot_size - 1] = '\n';
    return slot;
}

ShardCounter parse_slot(unsigned shard, const char* slot, std::uint64_t capacity) {
    ShardCounter counter;
    counter.clean = false;
    if (slot[slot_size - 1] != '\n' || std::memcmp(slot, &hex_pairs[2 * shard], 2) != 0)
        return counter;
    const std::string text(slot + 3, slot_size - 4);
    std::uint64_t bytes = 0, entries = 0;
    std::int64_t oldest = 0;
    char state = 0;
    if (std::sscanf(text.c_str(), "%20" SCNu64 " %12" SCNu64 " %20" SCNd64 " %c", &bytes, &entries,
                    &oldest, &state) != 4 ||
        (state != 'c' && state != 'd'))
        return ShardCounter{0, 0, 0, false};
    const ShardCounter parsed{bytes, entries, oldest, state == 'c'};
    // Impossible numbers (hand-edited, or a bit flipped) are not trusted, clean or dirty: the
    // shard is recounted, and meanwhile it weighs nothing in a sum.
    if (!plausible(parsed, capacity)) return ShardCounter{0, 0, 0, false};
    return parsed;
}

// The size of the file system `fd` lives on: no shard holds more. Unbounded when unknown.
std::uint64_t capacity_of(int fd) {
    struct statvfs info {};
    if (::fstatvfs(fd, &info) != 0 || info.f_blocks == 0) return UINT64_MAX;
    const std::uint64_t block = info.f_frsize != 0 ? info.f_frsize : info.f_bsize;
    if (info.f_blocks > UINT64_MAX / block) return UINT64_MAX;
    return info.f_blocks * block;
}

ShardTable parse_table(const char* bytes, std::size_t size, std::uint64_t capacity) {
    ShardTable table;
    for (unsigned shard = 0; shard < shard_count; ++shard) {
        if ((shard + 1) * slot_size <= size) {
            table[shard] = parse_slot(shard, bytes + shard * slot_size, capacity);
        } else {
            table[shard] = ShardCounter{0, 0, 0, false};  // cut short: recount
        }
    }
    return table;
}

std::size_t read_at(int fd, char* buffer, std::size_t size, off_t offset, const fs::path& path) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n =
            ::pread(fd, buffer + done, size - done, offset + static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("read", path, errno);
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

void write_at(int fd, const char* data, std::size_t size, off_t offset, const fs::path& path) {
    // One pwrite: a process killed around it leaves the old bytes or the new ones, never a mix.
    for (;;) {
        const ssize_t n = ::pwrite(fd, data, size, offset);
        if (n == static_cast<ssize_t>(size)) return;
        if (n < 0 && errno == EINTR) continue;
        fail("write", path, n < 0 ? errno : EIO);
    }
}

// Removes what stands under the counters file's name when it is not a regular file (a directory
// only when empty: what someone put in it is theirs). Returns whether it did.
bool remove_non_regular(int directory_fd, const fs::path& path) {
    const std::string name(shard_counters_name);
    struct stat info {};
    if (::fstatat(directory_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        S_ISREG(info.st_mode))
        return false;
    const bool directory = S_ISDIR(info.st_mode);
    if (::unlinkat(directory_fd, name.c_str(), directory ? AT_REMOVEDIR : 0) != 0) {
        const std::string error = std::strerror(errno);
        warn(WarningKind::disk_cache_repaired,
             "DiskProgramCache: '" + path.string() + "' is " +
                 std::string(file_kind(info.st_mode)) +
                 ", not the shard counters file, and removing it failed (unlinkat): " + error);
        return false;
    }
    warn(WarningKind::disk_cache_repaired,
         "DiskProgramCache: '" + path.string() + "' was " + std::string(file_kind(info.st_mode)) +
             ", not the shard counters file: removed, and the shards are recounted");
    return true;
}

// The counters file, opened for reading and writing (created empty when absent; replaced once
// when it is not a regular file). Throws CacheError.
int open_counters(int directory_fd, const fs::path& path) {
    const std::string name(shard_counters_name);
    for (int attempt = 0;; ++attempt) {
        // Non-blocking: a FIFO planted under the name must not hang the open.
        const int fd = ::openat(directory_fd, name.c_str(),
                                O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        int error = fd < 0 ? errno : 0;
        if (fd >= 0) {
            struct stat info {};
            if (::fstat(fd, &info) != 0) {
                error = errno;
                ::close(fd);
                fail("fstat", path, error);
            }
            if (S_ISREG(info.st_mode)) return fd;
            ::close(fd);
            error = EINVAL;
        }
        // ELOOP: a symbolic link (never followed); EISDIR: a directory; ENXIO: a socket.
        const bool damaged = error == ELOOP || error == EISDIR || error == ENXIO || error == EINVAL;
        if (!damaged || attempt > 0 || !remove_non_regular(directory_fd, path))
            fail("open", path, error);
    }
}

// Whether `fd` is the file the counters' name holds now.
bool is_current(int directory_fd, int fd) noexcept {
    struct stat held {}, named {};
    return ::fstat(fd, &held) == 0 && held.st_nlink > 0 &&
           ::fstatat(directory_fd, std::string(shard_counters_name).c_str(), &named,
                     AT_SYMLINK_NOFOLLOW) == 0 &&
           held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

// Takes an open-file-description lock on [start, start + length) of the counters file, on the
// file its name holds once the lock is held: a file deleted or replaced while we waited (by a
// repair, or a person) is not what other holders lock. Returns -1 when `wait` is false and
// another holds the range. Throws CacheError.
int lock_counters(int directory_fd, const fs::path& path, off_t start, off_t length, bool wait) {
    for (int attempt = 0;; ++attempt) {
        const int fd = open_counters(directory_fd, path);
        struct flock lock {};
        lock.l_type = F_WRLCK;
        lock.l_whence = SEEK_SET;
        lock.l_start = start;
        lock.l_len = length;
        while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) != 0) {
            if (errno == EINTR) continue;
            const int error = errno;
            ::close(fd);
            if (!wait && (error == EAGAIN || error == EACCES)) return -1;  // held by another
            fail("lock (F_OFD_SETLKW)", path, error);
        }
        // A name replaced again and again by something else: keep the lock we hold (its
        // numbers are at worst recounted later) rather than spin.
        if (is_current(directory_fd, fd) || attempt >= 8) return fd;
        ::close(fd);
    }
}

}  // namespace

std::string_view shard_folder_name(unsigned shard) noexcept {
    return {&hex_pairs[2 * (shard % shard_count)], 2};
}

bool is_shard_folder_name(std::string_view name) noexcept {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
    return name.size() == 2 && hex(name[0]) && hex(name[1]);
}

bool plausible(const ShardCounter& counter, std::uint64_t capacity) noexcept {
    if (counter.oldest_ns < 0 || counter.bytes > capacity) return false;
    if (counter.entries == 0) return counter.bytes == 0;
    if (counter.bytes / min_entry_bytes < counter.entries) return false;  // smaller than headers
    // Larger than its entries can be (no limit where entries * max_entry_bytes does not fit).
    return counter.entries > UINT64_MAX / max_entry_bytes ||
           counter.bytes <= counter.entries * max_entry_bytes;
}

std::optional<ShardTable> read_shard_table(int directory_fd, const fs::path& directory) {
    const fs::path path = directory / shard_counters_name;
    const int fd = ::openat(directory_fd, std::string(shard_counters_name).c_str(),
                            O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ELOOP || errno == ENXIO) return std::nullopt;
        fail("open", path, errno);
    }
    std::array<char, table_size> bytes;
    std::size_t size = 0;
    struct stat info {};
    try {
        if (::fstat(fd, &info) != 0) fail("fstat", path, errno);
        if (S_ISREG(info.st_mode)) size = read_at(fd, bytes.data(), bytes.size(), 0, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    const std::uint64_t capacity = capacity_of(fd);
    ::close(fd);
    if (!S_ISREG(info.st_mode)) return std::nullopt;  // damage, replaced by the next lock
    return parse_table(bytes.data(), size, capacity);
}

bool ensure_shard_table(int directory_fd, const fs::path& directory) {
    const fs::path path = directory / shard_counters_name;
    const int fd = lock_counters(directory_fd, path, 0, table_size, true);
    bool changed = false;
    try {
        std::array<char, table_size> bytes;
        const std::size_t size = read_at(fd, bytes.data(), bytes.size(), 0, path);
        const ShardTable table = parse_table(bytes.data(), size, capacity_of(fd));
        std::array<char, table_size> fixed = bytes;
        for (unsigned shard = 0; shard < shard_count; ++shard) {
            if (table[shard].clean) continue;
            // No slot holder runs (the whole table is locked), and a shard folder is created
            // before its slot is locked: a shard without a folder has no entries.
            struct stat info {};
            const bool absent =
                ::fstatat(directory_fd, std::string(shard_folder_name(shard)).c_str(), &info,
                          AT_SYMLINK_NOFOLLOW) != 0 &&
                errno == ENOENT;
            const auto slot = format_slot(shard, absent ? ShardCounter{} : table[shard], !absent);
            std::memcpy(fixed.data() + shard * slot_size, slot.data(), slot_size);
        }
        if (size < table_size || fixed != bytes) {
            write_at(fd, fixed.data(), fixed.size(), 0, path);
            changed = true;
        }
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return changed;
}

ShardLock::ShardLock(int directory_fd, const fs::path& directory, unsigned shard, bool wait)
    : directory_fd_(directory_fd), shard_(shard), path_(directory / shard_counters_name) {
    // Opened per lock: open-file-description locks exclude other descriptions only, so each
    // holder (thread or process) needs its own.
    fd_ = lock_counters(directory_fd, path_, static_cast<off_t>(shard * slot_size), slot_size,
                        wait);
}

ShardLock::~ShardLock() {
    if (fd_ >= 0) ::close(fd_);
}  // closing the description releases its lock

ShardCounter ShardLock::read() const {
    char slot[slot_size];
    const std::size_t size =
        read_at(fd_, slot, slot_size, static_cast<off_t>(shard_ * slot_size), path_);
    if (size < slot_size) return ShardCounter{0, 0, 0, false};
    return parse_slot(shard_, slot, capacity_of(fd_));
}

void ShardLock::write(const ShardCounter& counter, bool dirty) {
    const auto slot = format_slot(shard_, counter, dirty);
    write_at(fd_, slot.data(), slot.size(), static_cast<off_t>(shard_ * slot_size), path_);
}

bool ShardLock::current() const noexcept { return is_current(directory_fd_, fd_); }

ShardTable ShardLock::read_all() const {
    std::array<char, table_size> bytes;
    const std::size_t size = read_at(fd_, bytes.data(), bytes.size(), 0, path_);
    return parse_table(bytes.data(), size, capacity_of(fd_));
}

}  // namespace cudacore::detail
