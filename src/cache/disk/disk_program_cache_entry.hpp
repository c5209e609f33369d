// One entry of the disk program cache (internal): its file name, its bytes (magic, key,
// serialized ObjectCode; the format itself is DiskProgramCache::encode_entry / decode_entry),
// the temporary files its writes leave, and reading, writing and removing one.
#pragma once

#include "cudacore/cache_key.hpp"
#include "cudacore/object_code.hpp"

#include "cache/disk/disk_files.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore::detail::disk {

inline constexpr std::array<char, 8> entry_magic = {'C', 'C', 'E', 'N', 'T', 'R', 'Y', '\n'};
inline constexpr std::size_t entry_header_size = entry_magic.size() + 32;  // magic, key digest
// An entry that keeps the trust it was stored with (ProgramCache::put_many_with_trust): this
// magic, the key digest, the trust's length (u32, at most max_trust_size) and text, then the
// serialized ObjectCode.
inline constexpr std::array<char, 8> trusted_entry_magic = {'C', 'C', 'E', 'N', 'T', 'R', 'T', '\n'};
inline constexpr std::size_t max_trust_size = 4096;

/// The bytes of an entry file for `code` under `key`, holding `trust` when it is not empty
/// (DiskProgramCache::encode_entry when it is). Throws InvalidArgumentError for a trust longer
/// than max_trust_size, and what ObjectCode::serialize throws.
std::string encode_entry(const CacheKey& key, const ObjectCode& code, const std::string& trust);
/// The code of an entry file's `bytes` (either form), checked against `expected`, with `trust`
/// set to the trust it holds (empty for the plain form). Throws SerializationError unless
/// `bytes` is a valid entry for `expected`; never reads outside them.
ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected, std::string& trust);
inline constexpr std::string_view entry_extension = ".ccentry";
/// The cache's own marker file in its top folder (written atomically, so its temporaries too).
inline constexpr std::string_view marker_name = "CACHEDIR.TAG";

/// <64 lower-case hex digits>.ccentry: the only names the cache stores entries under.
bool is_entry_name(std::string_view name);

/// A temporary file the cache's own writes leave while they run (or when killed):
/// ".<entry or marker name>.tmp-<pid>-<counter>-<random>", the form of write_file_atomically_at.
bool is_cache_temporary(std::string_view name);

/// What reading one entry found; the file stays open in the FileDescriptor read_entry is given.
struct EntryRead {
    enum class Outcome { absent, hit, miss, corrupt } outcome = Outcome::absent;
    std::optional<ObjectCode> code;
    bool symlink = false;  ///< a symlink where the entry belongs (never followed)
    bool remove = false;   ///< corrupt: remove it if it is still the file read
    std::string trust{};   ///< a hit: the trust the entry was stored with
};

/// Reads and checks the entry `name` (at `path`) in the folder open as `folder_fd`, leaving it
/// open in `file`. Nothing larger than `max_bytes` or the format's limit is read; a read that
/// runs out of memory is a miss. Throws CacheError on an I/O error other than the entry being
/// absent or bad.
EntryRead read_entry(int folder_fd, const std::string& name, const std::filesystem::path& path,
                     const CacheKey& key, std::uint64_t max_bytes, FileDescriptor& file);

/// Removes the entry that `read` found corrupt in `shard` (open as `folder_fd`, the entry still
/// open as `file_fd`) when it is still the file read, and recounts the shard. A cache that
/// cannot be changed (read-only) keeps it: it stays a miss. Never throws CacheError.
void remove_corrupt_entry(int directory_fd, const std::filesystem::path& directory,
                          unsigned shard, int folder_fd, const std::string& name,
                          const EntryRead& read, int file_fd);

/// Writes the entry `name` (`bytes`, at `path`) into `shard`, under the shard's lock with its
/// counter marked dirty (killed anywhere in here, the next holder recounts the shard), and
/// counts it. Something other than a folder under the shard's name is replaced by one (a
/// warning). Sets `written` once the entry is in place: what throws after that (counting it)
/// leaves the counter dirty, to be recounted. Throws CacheError or std::system_error.
void store_entry(int directory_fd, const std::filesystem::path& directory, unsigned shard,
                 const std::string& name, const std::string& bytes,
                 const std::filesystem::path& path, bool& written);

/// An entry to store with store_entries: its shard, file name, bytes and path.
struct EncodedEntry {
    unsigned shard = 0;
    std::string name;
    std::string bytes;
    std::filesystem::path path;
};

/// Stores `entries` (at most a few dozen: each holds a descriptor meanwhile) as store_entry
/// would, with one flush for all: every temporary file is written, the file system is synced
/// once (syncfs), then each shard's entries are renamed into place under its lock and counted.
/// The renames are not synced: the caller syncs once after its last batch. Returns how many are in place; throws CacheError or
/// std::system_error (those not yet in place are removed; a shard left dirty is recounted).
std::size_t store_entries(int directory_fd, const std::filesystem::path& directory,
                          std::vector<EncodedEntry>& entries);

}  // namespace cudacore::detail::disk
