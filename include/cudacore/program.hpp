/// @file
/// Program: CUDA C++ (NVRTC), PTX (nvJitLink or the driver) or NVVM IR (libNVVM) compiled into
/// an ObjectCode; needs no GPU. docs/compiling.md, "What a Program keeps".
#pragma once

#include "cudacore/compile_errors.hpp"
#include "cudacore/compile_options.hpp"
#include "cudacore/owning_handle.hpp"
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

/// cxx: CUDA C++. ptx: PTX text. nvvm: NVVM IR, as LLVM assembly text or bitcode.
enum class SourceType { cxx, ptx, nvvm };

/// "cxx", "ptx", "nvvm"; "SourceType(N)" for a value outside the enumeration.
std::string to_string(SourceType type);

/// What precompiled headers did in a Program's last compile().
enum class PchOutcome {
    not_attempted,  ///< PCH off, a PTX program, or NVRTC chose not to make one (reason says which)
    created,        ///< this compile made a PCH that later compiles may use
    used,           ///< this compile used a PCH an earlier compile made (and may have made another: reason says)
    failed,         ///< PCH could not be made or read; the compile went on without it (reason)
};
/// "not_attempted", "created", "used", "failed"; "PchOutcome(N)" outside the enumeration.
std::string to_string(PchOutcome outcome);

/// What precompiled headers did in a Program's last compile().
struct PchStatus {
    PchOutcome outcome = PchOutcome::not_attempted;  ///< what happened
    std::string reason{};  ///< NVRTC's words: why it failed or why none was attempted
    std::string file{};    ///< the PCH file made or used, where NVRTC names it
    /// Bytes of PCH heap the compile needed (created, or failed for want of heap), else 0.
    std::size_t heap_size_required = 0;
};

/// No compile yet, an NVRTC program, an nvJitLink handle, or a driver link state.
using ProgramHandle = std::variant<std::monostate, nvrtcProgram, nvJitLinkHandle, CUlinkState>;

/// How Program::from_handle wraps an NVRTC program.
struct ProgramFromHandleOptions {
    /// close() or the last copy destroys it (nvrtcDestroyProgram); false: the caller does.
    bool take_ownership = false;
    ProgramOptions options{};  ///< what compile() compiles it with
};

/// A program to compile and its options. Distinct Programs compile concurrently; one Program is
/// not compiled from two threads at once. Every member but reset() and is_closed() and the
/// accessors throws InvalidArgumentError (naming the call) after close().
class Program {
public:
    /// Throws InvalidArgumentError when `source` is blank or `source_type` is not an enumerator.
    Program(std::string source, SourceType source_type, ProgramOptions options = {});

    /// Compiles to `target` (a PTX program: cubin only; C++ -dlto: ltoir), adding each name
    /// expression to the symbol map; a PCH problem never fails it (pch_status()). Throws
    /// CompileError (log, name, options), LoaderError (no NVRTC / nvJitLink), InvalidArgumentError.
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions = {});
    /// As compile(), throwing CompileCancelled when cancelled (a cache is refused).
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions,
                       const CompileOptions& options);
    /// As compile(), and sets `headers_read` to the header files the preprocessor opened (sorted
    /// absolute paths). Also throws InvalidArgumentError (fdevice_time_trace, a wrapped handle)
    /// and CompilerApiError (the trace cannot be written or read).
    ObjectCode compile(CodeType target, const std::vector<std::string>& name_expressions,
                       std::vector<std::string>& headers_read);

    /// Wraps an NVRTC program (owned with take_ownership). InvalidArgumentError for null.
    static Program from_handle(nvrtcProgram program, const ProgramFromHandleOptions& from = {});
    /// The earlier form with the ownership last.
    [[deprecated("use Program::from_handle(program, {.take_ownership = take_ownership, .options = options})")]]
    static Program from_handle(nvrtcProgram program, ProgramOptions options, bool take_ownership = false);
    /// The compiler's handle of the last compile of this Program or a copy (monostate before).
    ProgramHandle handle() const noexcept;

    /// The source given to the constructor (empty for from_handle).
    const std::string& source() const noexcept { return source_; }
    /// C++, PTX or NVVM IR.
    SourceType source_type() const noexcept { return source_type_; }
    /// The options given to the constructor (never changed afterwards).
    const ProgramOptions& options() const noexcept { return options_; }
    /// The exact flags compile(target) passes to its backend, in order.
    std::vector<std::string> flags(CodeType target) const;
    /// The backend compile() uses: "NVRTC", "NVVM", "nvJitLink" or "driver".
    std::string backend() const;
    /// The compiler's log of the last compile(), success or failure (PCH messages left out). A
    /// compile that uses an automatic PCH (pch_status() says `used`) has no warnings of the
    /// headers the PCH holds: NVRTC warned once, when it made it (set pch = false for all).
    const std::string& log() const noexcept { return log_; }
    /// What PCH did in the last compile() (not_attempted before any).
    const PchStatus& pch_status() const noexcept { return pch_status_; }
    /// Where compile() writes the source for debuggers (empty without debug or line info).
    std::filesystem::path debug_source_path() const;
    /// Writes the source to debug_source_path() atomically. CompilerApiError. Thread-safe.
    void write_debug_source() const;

    /// Ends the program (and its compiler handle, a wrapped one when owned) for every copy.
    void close() noexcept;
    /// Whether close() was called on this object or a copy.
    bool is_closed() const noexcept;
    /// Drops this object's share, leaving it empty (as moved from).
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
    std::shared_ptr<detail::ProgramKeyMemoSlot> key_memo_;
    friend struct detail::ProgramInternals;
    ObjectCode compile_cxx(CodeType target, const std::vector<std::string>& name_expressions,
                           bool pch_allowed, const CancellationToken* cancellation);
    ObjectCode compile_ptx_or_nvvm(CodeType target, const std::vector<std::string>& name_expressions);
};

}  // namespace cudacore
