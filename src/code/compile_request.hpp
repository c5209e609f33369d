// One compile of a Program from its files: Program::compile and `cudacore bundle`. A request says
// what it needs besides the code: the headers NVRTC opened (a front-end pass of their own,
// code/header_trace.hpp). A cached compile is given its files from memory instead
// (code/snapshot_compile.hpp). Internal.
#pragma once

#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"

#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::detail {

struct CompileSnapshot;
struct NvrtcAttempt;

struct CompileRequest {
    CodeType target = CodeType::cubin;
    std::vector<std::string> name_expressions{};
    enum class Needs {
        code,             // the code only
        headers_opened,   // and the header files NVRTC opened (Program::compile's headers_read)
    } needs = Needs::code;
    // Not null: the compile (and its header pass) is given up when it is cancelled, throwing
    // CompileCancelled. The token outlives the call.
    const CancellationToken* cancellation = nullptr;
};

struct CompiledProgram {
    ObjectCode code;
    // The header files NVRTC opened (absolute, sorted), for headers_opened.
    std::vector<std::string> headers_opened{};
    // Set when the headers could not be listed (the code is good; only keeping it is given up).
    std::exception_ptr headers_error{};
};

// Compiles `program` as `request` asks. The code is byte for byte what Program::compile gives
// (PCH and all); where the PCH it used may predate an edit of a header it read, it is compiled
// again without PCH. Throws what Program::compile throws; a request for headers or a view of a
// program that is not C++ gets an empty list and view. Not thread-safe on one Program.
CompiledProgram compile(Program& program, const CompileRequest& request);

// For a C++ program with std_headers, has the standard headers' folder made (or waits for
// another process making it) before anything asks for the program's flags, which have no token:
// the wait gives up within about 10 ms of a cancel, and then CompileCancelled is thrown (naming
// the program without its flags, which would wait again). Nothing to do without `cancellation`.
void await_standard_headers(const Program& program, const CancellationToken* cancellation);

// The door into Program for the library's compile path and the caches' memo of a Program value.
struct ProgramInternals {
    static ObjectCode compile_cxx(Program& program, CodeType target,
                                  const std::vector<std::string>& name_expressions, bool pch_allowed,
                                  const CancellationToken* cancellation) {
        return program.compile_cxx(target, name_expressions, pch_allowed, cancellation);
    }
    // The code of a finished NVRTC attempt of `program` (its handle and log kept), or the
    // CompileError / CompileCancelled it ended in, naming `used_flags`.
    static ObjectCode code_of_attempt(Program& program, CodeType target, NvrtcAttempt& attempt,
                                      const std::vector<std::string>& used_flags);
    // A C++ compile from `snapshot` (code/snapshot_compile.hpp), in program.cpp.
    static ObjectCode compile_snapshot(Program& program, CodeType target,
                                       const std::vector<std::string>& name_expressions,
                                       const CompileSnapshot& snapshot, const CancellationToken* cancellation);
    static ObjectCode compile_ptx_or_nvvm(Program& program, CodeType target,
                                          const std::vector<std::string>& name_expressions) {
        return program.compile_ptx_or_nvvm(target, name_expressions);
    }
    static ProgramKeyMemoSlot* key_memo_slot(const Program& program) noexcept {
        return program.key_memo_.get();
    }
};

}  // namespace cudacore::detail
