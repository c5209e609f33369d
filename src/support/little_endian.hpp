// Fixed-width little-endian integers in byte strings: the on-disk formats (header bundles, cache
// artefacts) write their header fields this way whatever the host's order. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Appends the low `size` bytes of `value`, least significant first.
inline void put_little_endian(std::string& out, std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// The `size` bytes at `offset` of `bytes` (the caller has checked they are there), least
// significant first.
inline std::uint64_t read_little_endian(std::string_view bytes, std::size_t offset, int size) {
    std::uint64_t value = 0;
    for (int i = 0; i < size; ++i)
        value |= std::uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
    return value;
}

}  // namespace cudacore::detail
