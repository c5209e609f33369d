// The disk program cache's per-shard size counters (internal): <cache>/.shards, one 64-byte
// text slot per shard folder, each changed only under an open-file-description lock on its bytes
// (a ShardLock), marked dirty while its shard changes and recounted by the next holder after a
// crash. Nothing in the file is trusted beyond what it can be: a slot that does not parse or is
// impossible reads as dirty. docs/design/cache-layout.md describes the format, the locking and
// the repairs.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace cudacore::detail {

inline constexpr unsigned shard_count = 256;
inline constexpr std::string_view shard_counters_name = ".shards";
inline constexpr std::uint64_t shard_table_bytes = 64 * shard_count;  // its size when whole

// What one entry file weighs: its header (magic and key) at least, and at most that header and
// the largest serialized ObjectCode (ObjectCode::max_serialized_size).
inline constexpr std::uint64_t min_entry_bytes = 40;
inline constexpr std::uint64_t max_entry_bytes = 40 + (std::uint64_t{4} << 30);

struct ShardCounter {
    std::uint64_t bytes = 0;
    std::uint64_t entries = 0;
    std::int64_t oldest_ns = 0;  // 0: unknown or empty
    bool clean = true;           // false: dirty or unreadable, to be recounted
};

using ShardTable = std::array<ShardCounter, shard_count>;

// "00" ... "ff".
std::string_view shard_folder_name(unsigned shard) noexcept;
// Whether `name` is a shard folder's name (two lower-case hex digits).
bool is_shard_folder_name(std::string_view name) noexcept;

// a + b, or the largest value where that does not fit.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

// Whether a slot's numbers can describe a shard on a file system of `capacity` bytes.
bool plausible(const ShardCounter& counter, std::uint64_t capacity) noexcept;

// Every slot, read without locking (one pread): a snapshot, exact for slots no one is changing.
// nullopt when the file does not exist or is not a regular file (the next ShardLock replaces
// it). Throws CacheError on other I/O errors.
std::optional<ShardTable> read_shard_table(int directory_fd,
                                           const std::filesystem::path& directory);

// Makes <directory>/.shards a regular file whose every slot is well formed: the file is created
// (or replaced, when it is not a regular file), and under a lock on the whole table each slot
// that is not clean is written clean and empty when its shard has no folder, and dirty (to be
// recounted by the next holder of its lock) when it has one. Clean slots are left as they are.
// Returns whether anything was written. Throws CacheError.
bool ensure_shard_table(int directory_fd, const std::filesystem::path& directory);

// Holds the lock on one shard's slot for its lifetime; reads and writes that slot.
class ShardLock {
public:
    // Opens the counters file (creating it, empty, when absent: its slots then read as dirty;
    // replacing it when it is not a regular file) and waits for the slot's lock; with `wait`
    // false, gives up at once when another holds it (held() is then false). The lock is taken
    // on the file the name holds once it is held (one deleted or replaced meanwhile is opened
    // again), so holders of one slot exclude each other across such damage. Throws CacheError
    // naming the file and the failing call.
    ShardLock(int directory_fd, const std::filesystem::path& directory, unsigned shard,
              bool wait = true);
    ~ShardLock();
    bool held() const noexcept { return fd_ >= 0; }
    ShardLock(const ShardLock&) = delete;
    ShardLock& operator=(const ShardLock&) = delete;

    // The slot as it is now (dirty when it is marked so, does not parse or is not plausible).
    ShardCounter read() const;
    // Writes the slot, marked clean or dirty. Throws CacheError.
    void write(const ShardCounter& counter, bool dirty);
    // The whole table, read under this lock (the other slots as a snapshot).
    ShardTable read_all() const;
    // Whether the file this lock is on is still the one the name holds (false once it was
    // deleted or replaced: what was written here is lost, and the slot must be marked dirty in
    // the file others now lock).
    bool current() const noexcept;

private:
    int directory_fd_;
    int fd_ = -1;
    unsigned shard_;
    std::filesystem::path path_;
};

}  // namespace cudacore::detail
