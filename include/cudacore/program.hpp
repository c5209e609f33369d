// Program: CUDA C++ (through NVRTC) or PTX (through nvJitLink, or the driver's linker when
// nvJitLink is missing and a driver is present) compiled into an ObjectCode. Needs no GPU.
//
// A Program is a value holding the source and options; compile() may be called many times (for
// different targets). Different Program objects may be compiled concurrently from many threads;
// one Program object must not be compiled from two threads at once (log() is per object).
#pragma once

#include "cudacore/object_code.hpp"
#include "cudacore/program_options.hpp"

#include <string>
#include <vector>

namespace cudacore {

enum class SourceType { cxx, ptx };

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
    // As compile(), and sets `headers_read` to every header file the compile opened (absolute
    // paths, sorted, each once; NVRTC's built-in headers, which have no file, left out). NVRTC
    // reports them in its time trace (--fdevice-time-trace), written to a private temporary
    // directory and removed. A PTX program reads no headers: the list is empty. Throws
    // InvalidArgumentError when options().fdevice_time_trace is set (the trace is the caller's
    // then) and CompilerApiError when the trace cannot be written or read, besides what
    // compile() throws.
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions,
                       std::vector<std::string>& headers_read);

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
    // Set only while compile(..., headers_read) runs: where NVRTC writes its time trace.
    std::string trace_path_;
};

}  // namespace cudacore
