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

#include <cstddef>
#include <string>
#include <vector>

namespace cudacore {

// cxx: CUDA C++. ptx: PTX text. nvvm: NVVM IR, as LLVM assembly text or bitcode (libNVVM reads
// both; ProgramOptions::extra_sources adds more modules, use_libdevice the math library).
enum class SourceType { cxx, ptx, nvvm };

// What precompiled headers did in a Program's last compile().
enum class PchOutcome {
    not_attempted,  // PCH off, a PTX program, or NVRTC chose not to make one (reason says which)
    created,        // this compile made a PCH that later compiles may use
    used,           // this compile used a PCH an earlier compile made
    failed,         // PCH could not be made or read; the compile went on without it (reason)
};
const char* to_string(PchOutcome outcome) noexcept;

struct PchStatus {
    PchOutcome outcome = PchOutcome::not_attempted;
    // NVRTC's words: why it failed (status name and log lines) or why none was attempted.
    std::string reason;
    // The PCH file made or used, where NVRTC names it.
    std::string file;
    // Bytes of PCH heap the compile needed (created, or failed for want of heap), else 0.
    std::size_t heap_size_required = 0;
};

class Program {
public:
    // Throws InvalidArgumentError when `source` is empty or `source_type` is not one of the
    // enumerators.
    Program(std::string source, SourceType source_type, ProgramOptions options = {});

    // Compiles to `target` (ptx, cubin or ltoir; a PTX program: cubin only; an NVVM program:
    // ptx or ltoir from libNVVM, cubin by linking that PTX with nvJitLink; a C++ program with
    // -dlto compiles to ltoir, not ptx, and says so). Each name expression ("scale<float>")
    // is added before compiling, and the ObjectCode's symbol map takes it to its lowered name.
    // C++ programs use NVRTC's automatic precompiled headers unless options.pch is false (see
    // ProgramOptions::pch). A PCH problem never fails a compile: when NVRTC fails because of
    // PCH (an unusable pch_dir, say), compile() compiles again without the PCH flags and
    // pch_status() says what went wrong. When the PCH heap was too small (and pch_heap_size is
    // unset), the heap is grown for later compiles.
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
    // NVRTC's "creating/using precompiled header file" messages are left out (see pch_status()).
    const std::string& log() const noexcept { return log_; }
    // What PCH did in the last compile() (not_attempted before any).
    const PchStatus& pch_status() const noexcept { return pch_status_; }

private:
    ObjectCode compile_nvvm_program(CodeType target, const std::vector<std::string>& name_expressions);

    std::string source_;
    SourceType source_type_;
    ProgramOptions options_;
    std::string log_;
    PchStatus pch_status_;
};

}  // namespace cudacore
