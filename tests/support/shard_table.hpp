// The disk cache's shard table (<cache>/.shards) read and written by tests: one 64-byte line per
// shard, "<shard> <bytes> <entries> <oldest> <c|d>" (c: clean, d: dirty, to be recounted).
#pragma once

#include "test_support.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace cudacore::test {

struct ShardSlot {
    std::uint64_t bytes = 0, entries = 0;
    std::int64_t oldest = 0;
    char state = '?';  // '?': no well-formed line for the shard
};

// The slot of `shard` ("6b"), as written.
inline ShardSlot shard_slot(const std::filesystem::path& cache, const std::string& shard) {
    const std::string table = read_file(cache / ".shards");
    const std::size_t at = std::stoul(shard, nullptr, 16) * 64;
    if (table.size() < at + 64) return {};
    ShardSlot s;
    char name[3] = {};
    if (std::sscanf(table.substr(at, 64).c_str(), "%2s %lu %lu %ld %c", name, &s.bytes, &s.entries,
                    &s.oldest, &s.state) != 5 ||
        shard != name)
        return {};
    return s;
}

// Replaces the slot of `shard` by `text`, padded to its line.
inline void write_shard_slot(const std::filesystem::path& cache, const std::string& shard,
                             const std::string& text) {
    std::string table = read_file(cache / ".shards");
    std::string line = text;
    line.resize(63, ' ');
    line += '\n';
    table.replace(std::stoul(shard, nullptr, 16) * 64, 64, line);
    write_file(cache / ".shards", table);
}

}  // namespace cudacore::test
