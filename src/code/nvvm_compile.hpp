// Compiling an NVVM IR program (text or bitcode) with libNVVM: the program's module, then
// options.extra_sources, then libdevice when options.use_libdevice, linked by NVVM and compiled
// to PTX (or LTO-IR with -gen-lto).
#pragma once

#include "cudacore/program_options.hpp"

#include <string>
#include <vector>

namespace cudacore::detail {

struct NvvmOutput {
    std::string code;  // PTX text (without its NUL) or LTO-IR
    std::string log;   // libNVVM's log, warnings included
};

// Throws CompileError (NVVM's log, the flags) when the IR is invalid or does not compile,
// LoaderError when libNVVM (or libdevice, when asked for) cannot be found.
NvvmOutput compile_nvvm(const std::string& source, const ProgramOptions& options,
                        const std::vector<std::string>& flags);

}  // namespace cudacore::detail
