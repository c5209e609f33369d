// Bytes as lowercase hexadecimal (digests in keys and names). Internal.
#pragma once

#include <cstddef>
#include <string>

namespace cudacore::detail {

inline std::string hex_of(const unsigned char* bytes, std::size_t size) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * size);
    for (std::size_t i = 0; i < size; ++i) {
        out += digits[bytes[i] >> 4];
        out += digits[bytes[i] & 15];
    }
    return out;
}

}  // namespace cudacore::detail
