#include "runtime/code_arch_fit.hpp"

#include "code/code_validation.hpp"
#include "code/cuda_elf.hpp"
#include "code/fatbin_reader.hpp"

#include <elf.h>

namespace cudacore::detail {

namespace {

// SASS of sm_XY runs on sm_XZ for Z >= Y, never across major versions.
ArchFit sass_fit(unsigned sm, int major, int minor) {
    const unsigned device = static_cast<unsigned>(major * 10 + minor);
    if (sm == 0) return ArchFit::ask_driver;
    if (sm == device) return ArchFit::runs;
    if (sm / 10 != static_cast<unsigned>(major) || sm > device) return ArchFit::cannot_run;
    return ArchFit::ask_driver;  // an older minor of the same major: usually runs; let it say
}

}  // namespace

ArchFit cubin_arch_fit(std::string_view cubin, int major, int minor) noexcept {
    Elf64_Ehdr header;
    if (!read_cubin_header(cubin, header)) return ArchFit::ask_driver;
    return sass_fit(cubin_sm(header), major, minor);
}

ArchFit fatbin_arch_fit(std::string_view fatbin, int major, int minor) noexcept {
    try {
        bool all_cannot_run = true;
        for (const FatbinImage& image : fatbin_images(fatbin)) {
            if (image.kind != kFatbinElf) {
                all_cannot_run = false;  // PTX or LTO-IR: the driver may JIT it
                continue;
            }
            const ArchFit fit = sass_fit(image.sm, major, minor);
            if (fit == ArchFit::runs) return ArchFit::runs;
            if (fit != ArchFit::cannot_run) all_cannot_run = false;
        }
        return all_cannot_run ? ArchFit::cannot_run : ArchFit::ask_driver;
    } catch (...) {
        return ArchFit::ask_driver;  // not a sound fatbin: the driver says what it makes of it
    }
}

}  // namespace cudacore::detail
