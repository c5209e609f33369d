#include "cache/disk/disk_program_cache_entry.hpp"

#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"

#include "cache/disk/disk_shard_repair.hpp"
#include "cache/disk/disk_shards.hpp"
#include "support/atomic_file.hpp"
#include "support/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <system_error>

namespace cudacore {

namespace detail::disk {
namespace {

namespace fs = std::filesystem;

bool is_lower_hex(std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The bytes of the regular file open as `fd` (`size` by its fstat), at most `limit` of them;
// nullopt when there is no memory for them now (a miss: the entry stays), or when the file grew
// past `limit` since (corrupt).
std::optional<std::string> read_entry_bytes(int fd, const fs::path& path, std::uint64_t limit,
                                            bool& out_of_memory) {
    try {
        return read_open_file_bounded(fd, path, limit);
    } catch (const std::length_error&) {
        return std::nullopt;  // grew past any entry's size since the fstat
    } catch (const std::bad_alloc&) {
        out_of_memory = true;
        return std::nullopt;
    } catch (const std::system_error& e) {
        throw CacheError(std::string("DiskProgramCache: ") + e.what());
    }
}

}  // namespace

bool is_entry_name(std::string_view name) {
    return name.size() == 64 + entry_extension.size() && name.ends_with(entry_extension) &&
           is_lower_hex(name.substr(0, 64));
}

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
    if (S_ISREG(info.st_mode)) {
        bool out_of_memory = false;
        const std::optional<std::string> bytes =
            read_entry_bytes(file.fd, path, std::min(max_bytes, format_limit), out_of_memory);
        if (out_of_memory) return {Outcome::miss, std::nullopt};
        if (bytes) {
            try {
                std::string trust;
                ObjectCode code = decode_entry(*bytes, key, trust);
                return {Outcome::hit, std::move(code), false, false, std::move(trust)};
            } catch (const SerializationError&) {
            } catch (const std::bad_alloc&) {
                return {Outcome::miss, std::nullopt};
            }
        }
    }
    // A directory there is left alone (it may hold a tree someone put there by mistake): it just
    // stays a miss, and the next put fails and is reported.
    return {Outcome::corrupt, std::nullopt, false, !S_ISDIR(info.st_mode)};
}

void remove_corrupt_entry(int directory_fd, const fs::path& directory, unsigned shard,
                          int folder_fd, const std::string& name, const EntryRead& read,
                          int file_fd) {
    if (read.symlink) {
        ::unlinkat(folder_fd, name.c_str(), 0);  // never counted: not a regular file
        return;
    }
    if (!read.remove) return;
    // Recounted: a damaged entry need not have the size it was counted with.
    try {
        change_shard(directory_fd, directory, shard, folder_fd, [&](ShardCounter& counter) {
            if (!remove_if_same_file(folder_fd, name, file_fd)) return;
            counter =
                count_listing(list_directory(folder_fd, shard_path(directory, shard), false));
        });
    } catch (const CacheError&) {
    }
}

void store_entry(int directory_fd, const fs::path& directory, unsigned shard,
                 const std::string& name, const std::string& bytes, const fs::path& path,
                 bool& written) {
    FileDescriptor folder(open_shard_for_store(directory_fd, directory, shard));
    if (folder.fd < 0) fail("open shard folder", shard_path(directory, shard), errno);
    change_shard(directory_fd, directory, shard, folder.fd, [&](ShardCounter& counter) {
        struct stat old {};
        const bool replacing = ::fstatat(folder.fd, name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
                               S_ISREG(old.st_mode);
        write_file_atomically_at(folder.fd, name, bytes, 0600, path);
        written = true;
        if (replacing) {
            counter.bytes -= std::min<std::uint64_t>(counter.bytes, old.st_size);
        } else {
            if (counter.entries == 0) counter.oldest_ns = now_nanoseconds();
            ++counter.entries;
        }
        counter.bytes = saturating_add(counter.bytes, bytes.size());
    });
}

std::size_t store_entries(int directory_fd, const fs::path& directory,
                          std::vector<EncodedEntry>& entries) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const EncodedEntry& a, const EncodedEntry& b) { return a.shard < b.shard; });
    std::vector<FileDescriptor> folders;  // one per shard of `entries`, in their order
    std::vector<PendingAtomicWrite> writes;
    writes.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i == 0 || entries[i].shard != entries[i - 1].shard) {
            folders.emplace_back(open_shard_for_store(directory_fd, directory, entries[i].shard));
            if (folders.back().fd < 0)
                fail("open shard folder", shard_path(directory, entries[i].shard), errno);
        }
        writes.emplace_back(folders.back().fd, entries[i].name, entries[i].bytes, 0600,
                            entries[i].path, false);
    }
    // The data durable before any name points at it: one flush instead of one per file.
    if (::syncfs(directory_fd) != 0) fail("syncfs", directory, errno);
    std::size_t placed = 0, folder = 0;
    for (std::size_t first = 0; first < entries.size(); ++folder) {
        const unsigned shard = entries[first].shard;
        std::size_t last = first;
        while (last < entries.size() && entries[last].shard == shard) ++last;
        change_shard(directory_fd, directory, shard, folders[folder].fd, [&](ShardCounter& counter) {
            for (std::size_t i = first; i < last; ++i) {
                struct stat old {};
                const bool replacing =
                    ::fstatat(folders[folder].fd, entries[i].name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(old.st_mode);
                writes[i].commit();
                ++placed;
                if (replacing) {
                    counter.bytes -= std::min<std::uint64_t>(counter.bytes, old.st_size);
                } else {
                    if (counter.entries == 0) counter.oldest_ns = now_nanoseconds();
                    ++counter.entries;
                }
                counter.bytes = saturating_add(counter.bytes, entries[i].bytes.size());
            }
        });
        first = last;
    }
    return placed;
}

}  // namespace detail::disk

std::string DiskProgramCache::encode_entry(const CacheKey& key, const ObjectCode& code) {
    return detail::disk::encode_entry(key, code, {});
}

ObjectCode DiskProgramCache::decode_entry(std::string_view bytes, const CacheKey& expected) {
    std::string trust;
    return detail::disk::decode_entry(bytes, expected, trust);
}

std::string detail::disk::encode_entry(const CacheKey& key, const ObjectCode& code, const std::string& trust) {
    if (trust.size() > max_trust_size) {
        throw InvalidArgumentError("DiskProgramCache: the trust of entry " + key.hex() + " holds " +
                                   std::to_string(trust.size()) + " bytes, more than " +
                                   std::to_string(max_trust_size));
    }
    const auto& magic = trust.empty() ? entry_magic : trusted_entry_magic;
    std::string bytes(magic.begin(), magic.end());
    bytes.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    if (!trust.empty()) {
        for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>((trust.size() >> (8 * i)) & 0xff));
        bytes += trust;
    }
    bytes += code.serialize();
    return bytes;
}

ObjectCode detail::disk::decode_entry(std::string_view bytes, const CacheKey& expected, std::string& trust) {
    auto refuse = [&](const std::string& why) {
        return SerializationError("DiskProgramCache: entry " + expected.hex() + " (" +
                                  std::to_string(bytes.size()) + " bytes) " + why);
    };
    const bool plain = bytes.size() >= entry_header_size &&
                       std::memcmp(bytes.data(), entry_magic.data(), entry_magic.size()) == 0;
    const bool trusted = bytes.size() >= entry_header_size + 4 &&
                         std::memcmp(bytes.data(), trusted_entry_magic.data(), trusted_entry_magic.size()) == 0;
    if (!plain && !trusted) throw refuse("has no entry header");
    if (std::memcmp(bytes.data() + entry_magic.size(), expected.digest.data(), 32) != 0)
        throw refuse("holds the code of another key");
    std::size_t code_at = entry_header_size;
    trust.clear();
    if (trusted) {
        std::uint64_t size = 0;
        for (int i = 0; i < 4; ++i)
            size |= std::uint64_t{static_cast<unsigned char>(bytes[entry_header_size + i])} << (8 * i);
        if (size == 0 || size > max_trust_size || size > bytes.size() - entry_header_size - 4)
            throw refuse("has a trust of " + std::to_string(size) + " bytes");
        trust.assign(bytes.substr(entry_header_size + 4, static_cast<std::size_t>(size)));
        code_at = entry_header_size + 4 + static_cast<std::size_t>(size);
    }
    try {
        return ObjectCode::deserialize(bytes.substr(code_at));
    } catch (const SerializationError& e) {
        throw SerializationError("DiskProgramCache: entry " + expected.hex() + ": " + e.what());
    }
}

}  // namespace cudacore
