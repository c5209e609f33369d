// The header files a C++ program's preprocessor opens, learned from NVRTC itself: a front-end-only
// pass (--fdevice-syntax-only) over the program's source and flags, with its time trace
// (--fdevice-time-trace) written to a private temporary folder and read back. The pass is
// separate from the compile that makes code: NVRTC's code generation changes with the time trace
// on (other register allocation, other instruction order), so the trace never rides along with a
// compile whose code is kept. PCH is left out of the pass: headers read from a PCH are not listed.
// Internal: Program::compile(target, names, headers_read), compile_cached and the header bundles.
#pragma once

#include "cudacore/header_bundle.hpp"
#include "cudacore/object_code.hpp"

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
                                        const std::string& object);

// headers_opened for a C++ Program compiled to `target` (its source, NVRTC flags without PCH,
// header bundles, and the name compile() gives NVRTC), started on a thread of its own so that it
// runs beside the compile that makes code; get() gives the list or throws what headers_opened
// throws. What depends on the calling thread (the current device's arch) is read before it
// starts; `program` must outlive the future. Runs on the calling thread at get() when no thread
// can be started. Throws InvalidArgumentError at once for a program that is not C++ or wraps a
// handle (its source is not known).
std::future<std::vector<std::string>> start_headers_opened(const Program& program, CodeType target);

// A compile and the headers it read. The compile is compile() itself (PCH and all: NVRTC orders
// a PTX's declarations differently without PCH, so only the same compile gives the same bytes),
// beside the front-end pass of start_headers_opened. NVRTC's automatic PCH is not checked against
// headers edited after it was made: when the compile used a PCH that an edit of a listed header
// may postdate (or whose making this process did not see), it is compiled again without PCH, so
// that the code always matches the headers listed. Throws what compile() throws.
struct RecordedCompile {
    ObjectCode code;
    std::vector<std::string> headers;
    std::exception_ptr headers_error;  // set when the headers could not be listed (code is good)
};
RecordedCompile compile_recording_headers(Program& program, CodeType target,
                                          const std::vector<std::string>& name_expressions);

// Notes that the compile that made the PCH file `file` began at `began` (Program::compile):
// headers changed since may not be in it. Never throws.
void remember_pch_made(const std::string& file, std::chrono::system_clock::time_point began) noexcept;

// compile() without PCH, for compile_recording_headers. Not thread-safe on one Program.
struct HeaderRecordingAccess {
    static ObjectCode compile_without_pch(Program& program, CodeType target,
                                          const std::vector<std::string>& name_expressions);
};

}  // namespace cudacore::detail
