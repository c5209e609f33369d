#include "cache/shard_counters.hpp"

#include "cudacore/errors.hpp"

#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
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

ShardCounter parse_slot(unsigned shard, const char* slot) {
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
    return ShardCounter{bytes, entries, oldest, state == 'c'};
}

ShardTable parse_table(const char* bytes, std::size_t size) {
    ShardTable table;
    for (unsigned shard = 0; shard < shard_count; ++shard) {
        if ((shard + 1) * slot_size <= size) {
            table[shard] = parse_slot(shard, bytes + shard * slot_size);
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

}  // namespace

std::string_view shard_folder_name(unsigned shard) noexcept {
    return {&hex_pairs[2 * (shard % shard_count)], 2};
}

bool is_shard_folder_name(std::string_view name) noexcept {
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
    return name.size() == 2 && hex(name[0]) && hex(name[1]);
}

std::optional<ShardTable> read_shard_table(int directory_fd, const fs::path& directory) {
    const fs::path path = directory / shard_counters_name;
    const int fd = ::openat(directory_fd, std::string(shard_counters_name).c_str(),
                            O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) return std::nullopt;
        fail("open", path, errno);
    }
    std::array<char, table_size> bytes;
    std::size_t size = 0;
    try {
        size = read_at(fd, bytes.data(), bytes.size(), 0, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return parse_table(bytes.data(), size);
}

void create_shard_table(int directory_fd, const fs::path& directory) {
    struct stat info {};
    if (::fstatat(directory_fd, std::string(shard_counters_name).c_str(), &info,
                  AT_SYMLINK_NOFOLLOW) == 0)
        return;
    std::string text;
    text.reserve(table_size);
    for (unsigned shard = 0; shard < shard_count; ++shard) {
        const auto slot = format_slot(shard, ShardCounter{}, false);
        text.append(slot.data(), slot.size());
    }
    try {
        write_file_atomically_at(directory_fd, std::string(shard_counters_name), text, 0600,
                                 directory / shard_counters_name);
    } catch (const std::system_error& e) {
        throw CacheError(std::string("DiskProgramCache: creating the shard counters: ") + e.what());
    }
}

ShardLock::ShardLock(int directory_fd, const fs::path& directory, unsigned shard, bool wait)
    : shard_(shard), path_(directory / shard_counters_name) {
    // Opened per lock: open-file-description locks exclude other descriptions only, so each
    // holder (thread or process) needs its own.
    fd_ = ::openat(directory_fd, std::string(shard_counters_name).c_str(),
                   O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd_ < 0) fail("open", path_, errno);
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = static_cast<off_t>(shard * slot_size);
    lock.l_len = slot_size;
    while (::fcntl(fd_, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) != 0) {
        if (errno == EINTR) continue;
        const int error = errno;
        ::close(fd_);
        fd_ = -1;
        if (!wait && (error == EAGAIN || error == EACCES)) return;  // held by another
        fail("lock (F_OFD_SETLKW)", path_, error);
    }
}

ShardLock::~ShardLock() {
    if (fd_ >= 0) ::close(fd_);
}  // closing the description releases its lock

ShardCounter ShardLock::read() const {
    char slot[slot_size];
    const std::size_t size =
        read_at(fd_, slot, slot_size, static_cast<off_t>(shard_ * slot_size), path_);
    if (size < slot_size) return ShardCounter{0, 0, 0, false};
    return parse_slot(shard_, slot);
}

void ShardLock::write(const ShardCounter& counter, bool dirty) {
    const auto slot = format_slot(shard_, counter, dirty);
    // One pwrite: a process killed around it leaves the old slot or the new one, never a mix.
    for (;;) {
        const ssize_t n =
            ::pwrite(fd_, slot.data(), slot.size(), static_cast<off_t>(shard_ * slot_size));
        if (n == static_cast<ssize_t>(slot.size())) return;
        if (n < 0 && errno == EINTR) continue;
        fail("write", path_, n < 0 ? errno : EIO);
    }
}

ShardTable ShardLock::read_all() const {
    std::array<char, table_size> bytes;
    const std::size_t size = read_at(fd_, bytes.data(), bytes.size(), 0, path_);
    return parse_table(bytes.data(), size);
}

}  // namespace cudacore::detail
