// Program: CUDA C++ (through NVRTC) or PTX (through nvJitLink, or the driver's linker when
// nvJitLink is missing and a driver is present) compiled into an ObjectCode. Needs no GPU.
//
// A Program is a value holding the source and options; compile() may be called many times (for
// different targets). Different Program objects may be compiled concurrently from many threads;
// one Program object must not be compiled from two threads at once (log() is per object).
//
// Handle: handle() is the compiler's handle of the last compile(): the nvrtcProgram of a C++
// program, the nvJitLinkHandle (or driver CUlinkState) of a PTX program. The Program keeps it
// alive after compile() returns or throws, so the compiler's own API can be called on it
// (nvrtcGetProgramLog, nvrtcGetLoweredName, nvJitLinkGetInfoLog...); the next compile() or the
// destruction of the last copy of the Program (copies share it) releases it. Never destroy it
// yourself. Before the first compile() it is monostate (from_handle: the wrapped program).
#pragma once

#include "cudacore/object_code.hpp"
#include "cudacore/program_options.hpp"

#include <cuda.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cudacore {

enum class SourceType { cxx, ptx };

// No compile yet, an NVRTC program, an nvJitLink handle, or a driver link state.
using ProgramHandle = std::variant<std::monostate, nvrtcProgram, nvJitLinkHandle, CUlinkState>;

class Program {
public:
    // Throws InvalidArgumentError when `source` is empty.
    Program(std::string source, SourceType source_type, ProgramOptions options = {});

    // Compiles to `target` (ptx, cubin or ltoir; a PTX program: cubin or ltoir is refused with a
    // clear error where the backend cannot produce it). Each name expression ("scale<float>")
    // is added before compiling, and the ObjectCode's symbol map takes it to its lowered name.
    // Throws CompileError (full log, program name, options) when compilation fails, LoaderError
    // when NVRTC / nvJitLink cannot be loaded, InvalidArgumentError for bad options.
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions = {});

    // Wraps an NVRTC program the caller created (nvrtcCreateProgram), to compile it with
    // `options` through compile() (name expressions are added to it then; NVRTC allows that only
    // before its first compilation). source() is empty: NVRTC does not give the source back.
    // Not owned unless `take_ownership`: then the last copy of the Program destroys it
    // (nvrtcDestroyProgram); otherwise the caller destroys it after the Program is gone.
    // Throws InvalidArgumentError for a null handle.
    static Program from_handle(nvrtcProgram program, ProgramOptions options = {},
                               bool take_ownership = false);
    // See the top of this file.
    ProgramHandle handle() const noexcept { return handle_; }

    const std::string& source() const noexcept { return source_; }
    SourceType source_type() const noexcept { return source_type_; }
    const ProgramOptions& options() const noexcept { return options_; }
    // The exact flags compile(target) passes to its backend, in order: the canonical form of the
    // options (used for cache keys). Resolves arch from the current device when unset.
    std::vector<std::string> flags(CodeType target) const;
    // The backend compile() uses: "NVRTC", "nvJitLink" or "driver".
    std::string backend() const;
    // The compiler's log (warnings) of the last compile(), success or failure.
    const std::string& log() const noexcept { return log_; }

private:
    std::string source_;
    SourceType source_type_;
    ProgramOptions options_;
    std::string log_;
    ProgramHandle handle_;
    std::shared_ptr<void> handle_owner_;  // keeps handle_ alive (null for a borrowed handle)
    bool wraps_handle_ = false;           // made by from_handle: compile() uses handle_
};

}  // namespace cudacore
