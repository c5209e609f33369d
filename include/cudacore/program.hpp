// Program: CUDA C++ (through NVRTC), PTX (through nvJitLink, or the driver's linker when
// nvJitLink is missing and a driver is present) or NVVM IR (text or bitcode, through libNVVM)
// compiled into an ObjectCode. Needs no GPU.
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

// cxx: CUDA C++. ptx: PTX text. nvvm: NVVM IR, as LLVM assembly text or bitcode (libNVVM reads
// both; ProgramOptions::extra_sources adds more modules, use_libdevice the math library).
enum class SourceType { cxx, ptx, nvvm };

class Program {
public:
    // Throws InvalidArgumentError when `source` is empty or `source_type` is not one of the
    // enumerators.
    Program(std::string source, SourceType source_type, ProgramOptions options = {});

    // Compiles to `target` (ptx, cubin or ltoir; a PTX program: cubin only; an NVVM program:
    // ptx or ltoir from libNVVM, cubin by linking that PTX with nvJitLink; a C++ program with
    // -dlto compiles to ltoir, not ptx, and says so). Each name expression ("scale<float>")
    // is added before compiling, and the ObjectCode's symbol map takes it to its lowered name.
    // Throws CompileError (full log, program name, options) when compilation fails, LoaderError
    // when NVRTC / nvJitLink cannot be loaded, InvalidArgumentError for bad options.
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions = {});

    const std::string& source() const noexcept { return source_; }
    SourceType source_type() const noexcept { return source_type_; }
    const ProgramOptions& options() const noexcept { return options_; }
    // The exact flags compile(target) passes to its backend, in order: the canonical form of the
    // options (used for cache keys). Resolves arch from the current device when unset.
    std::vector<std::string> flags(CodeType target) const;
    // The backend compile() uses: "NVRTC", "NVVM", "nvJitLink" or "driver".
    std::string backend() const;
    // The compiler's log (warnings) of the last compile(), success or failure.
    const std::string& log() const noexcept { return log_; }

private:
    ObjectCode compile_nvvm_program(CodeType target, const std::vector<std::string>& name_expressions);

    std::string source_;
    SourceType source_type_;
    ProgramOptions options_;
    std::string log_;
};

}  // namespace cudacore
