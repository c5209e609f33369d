#include "cache/disk/disk_shards.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>

namespace cudacore::detail::disk {

std::filesystem::path shard_path(const std::filesystem::path& directory, unsigned shard) {
    return directory / shard_folder_name(shard);
}

int open_shard(int directory_fd, unsigned shard, bool create) {
    const std::string name(shard_folder_name(shard));
    constexpr int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::openat(directory_fd, name.c_str(), flags);
    if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(directory_fd, name.c_str(), 0700) != 0 && errno != EEXIST) return -1;
        fd = ::openat(directory_fd, name.c_str(), flags);
    }
    return fd;
}

bool not_a_folder(int error) { return error == ENOTDIR || error == ELOOP; }

ShardCounter count_listing(const DirectoryListing& listing) {
    ShardCounter counter;
    for (const auto& entry : listing.entries) {
        counter.bytes += entry.size;
        ++counter.entries;
        const std::int64_t modified = nanoseconds(entry.modified);
        if (counter.oldest_ns == 0 || modified < counter.oldest_ns) counter.oldest_ns = modified;
    }
    return counter;
}

}  // namespace cudacore::detail::disk
