// Eviction from the disk program cache after a put (internal): least recently used entries go,
// one shard at a time, until the shards' counters add up to no more than the bound.
#pragma once

#include <cstdint>
#include <filesystem>

namespace cudacore::detail::disk {

/// After a put: while the counters add up to more than `bound`, evicts from the shard whose
/// least recently used entry is the oldest known (a shard whose record proves stale is listed,
/// its record corrected, and the next one tried; after a few such listings the shard then
/// oldest gives way anyway). A shard that claims more than the whole bound is listed first (a
/// counter wrong but possible must not make every other shard give way). Shards another process
/// is changing now are left to it. Each eviction removes at least a tenth of its shard, so the
/// listing it costs (one shard of 256) is shared by the puts that follow. A shard that cannot be
/// listed is skipped and named in a warning; the others still keep the bound. Returns how many
/// entries were removed. Never throws: the entry is stored already.
std::uint64_t evict_after_put(int directory_fd, const std::filesystem::path& directory,
                              std::uint64_t bound);

}  // namespace cudacore::detail::disk
