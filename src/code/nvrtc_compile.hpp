// One NVRTC compile (create, name expressions, compile, log, code, lowered names, destroy) and
// the precompiled-header bookkeeping around it. Program::compile is the only user.
#pragma once

#include "cudacore/cancellation.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <nvrtc.h>

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cudacore::detail {

struct NvrtcAttempt {
    nvrtcResult status = NVRTC_SUCCESS;
    std::string log;  // without NVRTC's "creating/using precompiled header file" lines
    std::string code;
    SymbolMap symbols;
    // PCH: nvrtcGetPCHCreateStatus, nvrtcGetPCHHeapSizeRequired, and the files NVRTC's messages
    // named: the one it created, the one it used (a compile may use one and create another).
    nvrtcResult pch_create_status = NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED;
    std::size_t pch_heap_size_required = 0;
    std::string pch_created_file;
    std::string pch_used_file;
    bool pch_used = false;
    // The program compiled, kept alive for Program::handle() (destroyed with the last copy);
    // null when the caller passed its own program.
    std::shared_ptr<std::remove_pointer_t<nvrtcProgram>> program;
};

// Headers handed to nvrtcCreateProgram: parallel arrays of contents and include names, pointing
// into HeaderBundles the caller keeps alive.
struct InMemoryHeaders {
    std::vector<const char*> contents;
    std::vector<const char*> names;
};

// Compiles; throws CompilerApiError only for calls other than nvrtcCompileProgram (whose
// failure is returned in status, with the log). `pch`: the flags ask for PCH, so the compile
// holds the PCH heap against resizing while it runs. `existing`: compile this program (the
// caller's, not destroyed here) instead of creating one from `source`; `add_name_expressions`
// false when they were added already (NVRTC allows that only before the first compilation).
// `headers`: given to the program created here (a wrapped program has its own). `cancellation`
// (not null): NVRTC's flow callback asks it, and a cancelled compile returns with status
// NVRTC_ERROR_CANCELLED (the callback is left in place on a wrapped program: its payload is the
// token, which the caller keeps alive while the program may be compiled; it is reset after).
// nvrtcDestroyProgram(program), unless the process is exiting (then left to its end: NVRTC's
// exit-time destructors may have run). Never throws.
void destroy_nvrtc_program(nvrtcProgram program) noexcept;

NvrtcAttempt nvrtc_compile(const std::string& source, const std::string& name,
                           const std::vector<std::string>& flags,
                           const std::vector<std::string>& name_expressions, CodeType target,
                           const std::string& object, bool pch, nvrtcProgram existing = nullptr,
                           bool add_name_expressions = true, const InMemoryHeaders& headers = {},
                           const CancellationToken* cancellation = nullptr);

// The headers of `bundles` by include name, the first bundle holding a name winning (see
// ProgramOptions::header_bundles); the pointers live as long as the bundles.
InMemoryHeaders in_memory_headers(const std::vector<HeaderBundle>& bundles);

// The names of the headers a failed compile's log says it could not open ("cannot open source
// file "x.h"", "could not open source file "x.h""), each once, in order.
std::vector<std::string> headers_not_found(const std::string& log);

// Ends the time trace a failed compile left open. NVRTC starts its profiler on this thread for
// --fdevice-time-trace and writes the trace only when the compile succeeds: after a failure the
// profiler stays on, and the next compile of this thread, traced or not, writes it (an untraced
// one to ".json" in the working directory). A traced compile of an empty program, written to
// `trace_path` (.json appended), ends it. Errors are ignored.
void end_failed_time_trace(const std::string& trace_path) noexcept;

// nvrtcSetPCHHeapSize(size) unless the heap already has that size; waits for PCH compiles in
// flight (NVRTC frees the old heap). Throws CompilerApiError.
void set_pch_heap_size(std::size_t size);

// The PCH heap's size now (nvrtcGetPCHHeapSize; NVRTC 13's 256 MiB if it cannot say): the
// largest a PCH can be.
std::size_t pch_heap_size();

// Whether a failed compile's log blames precompiled headers (an error line naming PCH).
bool log_blames_pch(const std::string& log);
// The log's error lines that name PCH, joined by "; ".
std::string pch_error_lines(const std::string& log);
// `flags` without the PCH ones (--pch, --create-pch, --use-pch, --pch-*, --instantiate-...).
std::vector<std::string> without_pch_flags(const std::vector<std::string>& flags);
// The status of a compile that ran with PCH flags. Grows the PCH heap when it was too small and
// options.pch_heap_size is unset.
PchStatus pch_outcome(const NvrtcAttempt& attempt, const ProgramOptions& options);

}  // namespace cudacore::detail
