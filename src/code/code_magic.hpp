// The first bytes that tell binary GPU code apart (ELF and ar carry theirs in <elf.h>, <ar.h>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::detail {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;  // a fatbin's first 32 bits
constexpr std::uint32_t kLtoIrMagic = 0x7F4E43ED;   // an NVVM (LTO-IR) container's first 32 bits

// The first 8 bytes in hex, for messages that say what unrecognised bytes start with.
inline std::string hex_start(std::string_view code) {
    static constexpr const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : code.substr(0, 8)) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

}  // namespace cudacore::detail
