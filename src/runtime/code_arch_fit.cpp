#include "runtime/code_arch_fit.hpp"

#include "cudacore/code_inspection.hpp"

#include <elf.h>

#include <cstring>
#include <string>

namespace cudacore::detail {

namespace {

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

// SASS of sm_XY runs on sm_XZ for Z >= Y, never across major versions.
ArchFit sass_fit(unsigned sm, int major, int minor) {
    const unsigned device = static_cast<unsigned>(major * 10 + minor);
    if (sm == 0) return ArchFit::ask_driver;
    if (sm == device) return ArchFit::runs;
    if (sm / 10 != static_cast<unsigned>(major) || sm > device) return ArchFit::cannot_run;
    return ArchFit::ask_driver;  // an older minor of the same major: usually runs; let it say
}

// "sm_90", "sm_90a" -> 90; 0 when not of that form.
unsigned sm_number(const std::string& arch) {
    if (arch.rfind("sm_", 0) != 0) return 0;
    unsigned value = 0;
    std::size_t i = 3;
    for (; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i)
        value = value * 10 + static_cast<unsigned>(arch[i] - '0');
    return i == 3 ? 0 : value;
}

}  // namespace

ArchFit cubin_arch_fit(std::string_view cubin, int major, int minor) noexcept {
    Elf64_Ehdr header;
    if (cubin.size() < sizeof header) return ArchFit::ask_driver;
    std::memcpy(&header, cubin.data(), sizeof header);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_CUDA)
        return ArchFit::ask_driver;
    // The SM number is in e_flags: bits 8..15 from ELF ABI version 8 (CUDA 12.8+), 0..7 before.
    const unsigned sm = header.e_ident[EI_ABIVERSION] >= 8 ? (header.e_flags >> 8) & 0xff
                                                           : header.e_flags & 0xff;
    return sass_fit(sm, major, minor);
}

ArchFit fatbin_arch_fit(std::string_view fatbin, int major, int minor) noexcept {
    try {
        const CodeInfo info = inspect_code(fatbin);
        if (info.type != CodeType::fatbin || info.entries.empty()) return ArchFit::ask_driver;
        bool all_cannot_run = true;
        for (const FatbinEntry& entry : info.entries) {
            if (entry.kind != "elf") {
                all_cannot_run = false;  // PTX or LTO-IR: the driver may JIT it
                continue;
            }
            const ArchFit fit = sass_fit(sm_number(entry.arch), major, minor);
            if (fit == ArchFit::runs) return ArchFit::runs;
            if (fit != ArchFit::cannot_run) all_cannot_run = false;
        }
        return all_cannot_run ? ArchFit::cannot_run : ArchFit::ask_driver;
    } catch (...) {
        return ArchFit::ask_driver;
    }
}

}  // namespace cudacore::detail
