/// @file
/// Program: CUDA C++ (through NVRTC), PTX (through nvJitLink, or the driver's linker when
/// nvJitLink is missing and a driver is present) or NVVM IR (text or bitcode, through libNVVM)
/// compiled into an ObjectCode. Needs no GPU. A value holding the source and options; compile()
/// may be called many times. Different Program objects may be compiled concurrently; one must not
/// be compiled from two threads at once (log() is per object). Compiling never changes how the
/// process handles a signal. handle() is the compiler's handle of the last compile() of this
/// Program or a copy (they share it), alive until the next compile() of a copy, close(), or the
/// last copy goes; monostate before a compile and for NVVM IR. docs/compiling.md, "What a
/// Program keeps", says more (signals, the cache-key memo, the handle).
#pragma once

#include "cudacore/compile_errors.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/forward.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program_options.hpp"

#include <cuda.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace cudacore {

/// cxx: CUDA C++. ptx: PTX text. nvvm: NVVM IR, as LLVM assembly text or bitcode (libNVVM reads
/// both; ProgramOptions::extra_sources adds more modules, use_libdevice the math library).
enum class SourceType { cxx, ptx, nvvm };

/// "cxx", "ptx", "nvvm"; "SourceType(N)" for a value outside the enumeration. Never throws beyond
/// std::bad_alloc.
std::string to_string(SourceType type);

/// What precompiled headers did in a Program's last compile().
enum class PchOutcome {
    not_attempted,  ///< PCH off, a PTX program, or NVRTC chose not to make one (reason says which)
    created,        ///< this compile made a PCH that later compiles may use
    used,           ///< this compile used a PCH an earlier compile made (and may have made another: reason says)
    failed,         ///< PCH could not be made or read; the compile went on without it (reason)
};
/// "not_attempted", "created", "used" or "failed"; "PchOutcome(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(PchOutcome outcome);

/// What precompiled headers did in a Program's last compile().
struct PchStatus {
    PchOutcome outcome = PchOutcome::not_attempted;  ///< what happened
    /// NVRTC's words: why it failed (status name and log lines) or why none was attempted.
    std::string reason{};
    /// The PCH file made or used, where NVRTC names it.
    std::string file{};
    /// Bytes of PCH heap the compile needed (created, or failed for want of heap), else 0.
    std::size_t heap_size_required = 0;
};

/// No compile yet, an NVRTC program, an nvJitLink handle, or a driver link state.
using ProgramHandle = std::variant<std::monostate, nvrtcProgram, nvJitLinkHandle, CUlinkState>;

/// How Program::from_handle wraps an NVRTC program (every from_handle takes one such struct,
/// `take_ownership` first: docs/api-conventions.md).
struct ProgramFromHandleOptions {
    /// close() or the last copy of the Program destroys it (nvrtcDestroyProgram); false: the caller does,
    /// after the Program is gone.
    bool take_ownership = false;
    ProgramOptions options{};  ///< what compile() compiles it with
};

/// A program to compile (CUDA C++, PTX or NVVM IR) and its options; compile() may be called many
/// times.
class Program {
public:
    /// Throws InvalidArgumentError when `source` is empty or only whitespace (spaces, tabs,
    /// carriage returns, newlines) or `source_type` is not one of the enumerators.
    Program(std::string source, SourceType source_type, ProgramOptions options = {});

    /// Compiles to `target` (ptx, cubin or ltoir; a PTX program: cubin only; an NVVM program:
    /// ptx or ltoir, cubin through nvJitLink; C++ with -dlto: ltoir), adding each name expression
    /// ("scale<float>") to the symbol map. C++ uses NVRTC's automatic PCH unless options.pch is
    /// false; a PCH problem never fails a compile (pch_status() says what happened; the guide
    /// docs/compiling.md, "What a Program keeps", says how). A header not found is named first in
    /// the error. Throws CompileError (full log, program name, options) when compilation fails,
    /// LoaderError when NVRTC / nvJitLink cannot be loaded, InvalidArgumentError for bad options.
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions = {});
    /// As compile(target, name_expressions), given up when `options.cancellation` is cancelled:
    /// then throws CompileCancelled (cancellation.hpp), also when the compile had finished but not
    /// returned. Only `cancellation` is used; a cache is refused with InvalidArgumentError (use
    /// compile_cached). Thread-safe as compile().
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions,
                       const CompileOptions& options);
    /// As compile(), and sets `headers_read` to every header file the compile's preprocessor
    /// opened (absolute paths, sorted, each once; built-in and bundled headers left out; empty for
    /// PTX and NVVM IR), from a second, front-end-only NVRTC pass beside the compile; the code is
    /// byte for byte what compile() gives (docs/compiling.md, "What a Program keeps"). Throws
    /// InvalidArgumentError when options().fdevice_time_trace is set or the program wraps a
    /// handle, CompilerApiError when the trace cannot be written or read, besides what compile()
    /// throws. Not thread-safe on one Program (as compile()).
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions,
                       std::vector<std::string>& headers_read);

    /// Wraps an NVRTC program the caller created (nvrtcCreateProgram), to compile it with
    /// `from.options` through compile() (name expressions are added to it then; NVRTC allows that
    /// only before its first compilation). source() is empty: NVRTC does not give the source
    /// back. Not owned unless `from.take_ownership`: then close() or the last copy destroys it
    /// (nvrtcDestroyProgram); otherwise the caller destroys it after the Program is gone.
    /// Throws InvalidArgumentError for a null handle.
    static Program from_handle(nvrtcProgram program, const ProgramFromHandleOptions& from = {});
    /// The earlier form with the ownership last.
    [[deprecated("use Program::from_handle(program, {.take_ownership = take_ownership, .options = options})")]]
    static Program from_handle(nvrtcProgram program, ProgramOptions options, bool take_ownership = false);
    /// See the file comment (monostate once closed or empty). Never throws.
    ProgramHandle handle() const noexcept;

    /// The source given to the constructor (empty for from_handle). Never throws.
    const std::string& source() const noexcept { return source_; }
    /// C++, PTX or NVVM IR. Never throws.
    SourceType source_type() const noexcept { return source_type_; }
    /// The options given to the constructor (never changed afterwards). Never throws.
    const ProgramOptions& options() const noexcept { return options_; }
    /// The exact flags compile(target) passes to its backend, in order: the canonical form of the
    /// options (used for cache keys). Resolves arch from the current device when unset.
    std::vector<std::string> flags(CodeType target) const;
    /// The backend compile() uses: "NVRTC", "NVVM", "nvJitLink" or "driver".
    std::string backend() const;
    /// The compiler's log (warnings) of the last compile(), success or failure.
    /// NVRTC's "creating/using precompiled header file" messages are left out (see pch_status()).
    const std::string& log() const noexcept { return log_; }
    /// What PCH did in the last compile() (not_attempted before any).
    const PchStatus& pch_status() const noexcept { return pch_status_; }
    /// Where compile() writes this program's source for debuggers (see
    /// ProgramOptions::debug_source_dir), as an absolute path: set for a C++ program compiled with
    /// debug or line information, empty otherwise. Never throws except std::bad_alloc.
    std::filesystem::path debug_source_path() const;
    /// Writes the source to debug_source_path() unless it already holds it (compile() does this
    /// itself; compile_cached too, so code served from a cache finds its source). Does nothing
    /// when debug_source_path() is empty. Throws CompilerApiError naming the step, errno and the
    /// path when the file cannot be written. Safe to call from several threads and processes
    /// (the file is replaced atomically).
    void write_debug_source() const;

    /// Ends the program for every copy: releases the compiler's handle (a wrapped one only when
    /// owned); compile(), flags(), backend() and write_debug_source() then throw
    /// InvalidArgumentError naming the call and the program. Never throws; not to race with
    /// other calls on a copy.
    void close() noexcept;
    /// Whether close() was called on this object or a copy. Never throws.
    bool is_closed() const noexcept;
    /// Drops this object's share, leaving it empty (as moved from). Never throws.
    void reset() noexcept { shared_.reset(); }

private:
    void check_open(const char* operation) const;  // InvalidArgumentError naming it when closed
    ObjectCode compile_nvvm_program(CodeType target, const std::vector<std::string>& name_expressions);

    std::string source_;
    SourceType source_type_;
    ProgramOptions options_;
    std::string log_;
    PchStatus pch_status_;
    bool wraps_handle_ = false;  ///< made by from_handle: compile() uses the handle given
    struct Shared;  // what the copies share: closed or not, the last compile's handle
    std::shared_ptr<Shared> shared_;
    /// The cache-key memo (docs/compiling.md, "What a Program keeps"); shared by copies.
    std::shared_ptr<detail::ProgramKeyMemoSlot> key_memo_;
    friend struct detail::ProgramInternals;
    // One NVRTC compile of a C++ program; PCH only where `pch_allowed` (and the options ask).
    ObjectCode compile_cxx(CodeType target, const std::vector<std::string>& name_expressions,
                           bool pch_allowed, const CancellationToken* cancellation);
    ObjectCode compile_ptx_or_nvvm(CodeType target, const std::vector<std::string>& name_expressions);
};

}  // namespace cudacore
