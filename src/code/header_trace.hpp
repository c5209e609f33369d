// The header files a C++ program's preprocessor opens, learned from NVRTC itself: a front-end-only
// pass (--fdevice-syntax-only) over the program's source and flags, with its time trace
// (--fdevice-time-trace) written to a private temporary folder and read back. The pass is
// separate from the compile that makes code: NVRTC's code generation changes with the time trace
// on (other register allocation, other instruction order), so the trace never rides along with a
// compile whose code is kept. PCH is left out of the pass: headers read from a PCH are not listed.
// Internal: the compile path (code/compile_request.hpp) and the header bundles.
#pragma once

#include "cudacore/header_bundle.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <chrono>
#include <exception>
#include <future>
#include <string>
#include <vector>

namespace cudacore {
class Program;
}

namespace cudacore::detail {

// Every header file a compile of `source` (named `name` to NVRTC: quoted includes of the source
// are looked for in its folder) with `flags` opens: absolute paths, sorted, each once; NVRTC's
// built-in headers (no file) and headers served from `bundles` (in memory) are left out.
// `object` names the program in errors. Throws CompileError when the front end fails (the log
// says why) and CompilerApiError when the trace cannot be written or read. Thread-safe.
std::vector<std::string> headers_opened(const std::string& source, const std::string& name,
                                        const std::vector<std::string>& flags,
                                        const std::vector<HeaderBundle>& bundles,
                                        const std::string& object,
                                        const CancellationToken* cancellation = nullptr);

// headers_opened for a C++ Program compiled to `target` (its source, NVRTC flags without PCH,
// header bundles, and the name compile() gives NVRTC), started on a thread of its own so that it
// runs beside the compile that makes code; get() gives the list or throws what headers_opened
// throws. What depends on the calling thread (the current device's arch) is read before it
// starts; `program` must outlive the future. Runs on the calling thread at get() when no thread
// can be started. Throws InvalidArgumentError at once for a program that is not C++ or wraps a
// handle (its source is not known).
// `cancellation` (not null, outliving the future): the pass is given up when it is cancelled,
// get() then throwing CompileCancelled.
std::future<std::vector<std::string>> start_headers_opened(const Program& program, CodeType target,
                                                           const CancellationToken* cancellation = nullptr);

// Whether the PCH a compile used (`status`) may predate an edit of one of `headers`: it was made
// by a compile this process did not see, or a header was changed (contents or metadata) less than
// a second before that compile began, or after. NVRTC's automatic PCH is not checked against
// headers edited after it was made: such a compile is made again without PCH
// (code/compile_request.hpp). Never throws except std::bad_alloc.
bool pch_may_be_stale(const PchStatus& status, const std::vector<std::string>& headers);

// Notes that the compile that made the PCH file `file` began at `began` (Program::compile):
// headers changed since may not be in it. Never throws.
void remember_pch_made(const std::string& file, std::chrono::system_clock::time_point began) noexcept;

}  // namespace cudacore::detail
