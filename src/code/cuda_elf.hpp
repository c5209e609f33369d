// What NVIDIA adds to ELF in a cubin: its machine type, its attribute sections, the mark of a
// kernel symbol, and where the header keeps the SM number.
#pragma once

#include "code/bounded_read.hpp"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <string_view>

namespace cudacore::detail {

constexpr std::uint16_t kEmCuda = 190;  // EM_CUDA (older <elf.h> may lack the name)
// NVIDIA's attribute sections (.nv.info, .nv.info.KERNEL) are SHT_LOPROC.
constexpr std::uint32_t kShtCudaInfo = SHT_LOPROC;
constexpr unsigned char kStoCudaEntry = 0x10;  // st_other bit of a kernel (entry function)

// The SM number a cubin's header states (0 when it states none): in e_flags, bits 8..15 from
// ELF ABI version 8 (CUDA 12.8+), bits 0..7 before that.
inline unsigned cubin_sm(const Elf64_Ehdr& header) noexcept {
    return header.e_ident[EI_ABIVERSION] >= 8 ? (header.e_flags >> 8) & 0xff : header.e_flags & 0xff;
}

// The header of a 64-bit cubin, or false when the bytes do not start with one (only the header
// is read: nothing else is checked).
inline bool read_cubin_header(std::string_view bytes, Elf64_Ehdr& header) noexcept {
    return try_read_at(bytes, 0, header) && std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
           header.e_ident[EI_CLASS] == ELFCLASS64 && header.e_machine == kEmCuda;
}

}  // namespace cudacore::detail
