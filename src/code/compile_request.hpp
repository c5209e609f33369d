// One compile of a Program, the one call every way of compiling goes through: Program::compile,
// compile_cached (and compile_many, compile_fatbin and compile_distributed through it) and
// `cudacore bundle`. A request says what it needs besides the code: the headers NVRTC opened (a
// front-end pass of their own, headers/header_trace.hpp) or the view of the files the code was
// compiled from (headers/file_view.hpp), which is what a cache keys the code by. The view is one
// construction: the start is taken before the compile and its header pass begin, every file is
// read once after both end, and the view says when anything it covers changed in between, so that
// a caller never stores code under files it was not compiled from. Internal.
#pragma once

#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "headers/file_view.hpp"

#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::detail {

struct CompileRequest {
    CodeType target = CodeType::cubin;
    std::vector<std::string> name_expressions{};
    enum class Needs {
        code,             // the code only
        headers_opened,   // and the header files NVRTC opened (Program::compile's headers_read)
        view,             // and the view of the files it was compiled from (a cache's key)
    } needs = Needs::code;
    // Not null: the compile (and its header pass) is given up when it is cancelled, throwing
    // CompileCancelled. The token outlives the call.
    const CancellationToken* cancellation = nullptr;
};

struct CompiledProgram {
    ObjectCode code;
    // The header files NVRTC opened (absolute, sorted), for headers_opened and view.
    std::vector<std::string> headers_opened{};
    // For view: what the code was compiled from; `changed` or `refusal` say when it cannot key it.
    std::optional<FileView> view{};
    // For view of a C++ program: where NVRTC searched (the view's paths were looked up there).
    std::optional<IncludeSearch> search{};
    // Set when the headers could not be listed (the code is good; only keeping it is given up).
    std::exception_ptr headers_error{};
};

// Compiles `program` as `request` asks. The code is byte for byte what Program::compile gives
// (PCH and all); where the PCH it used may predate an edit of a header it read, it is compiled
// again without PCH. Throws what Program::compile throws; a request for headers or a view of a
// program that is not C++ gets an empty list and view. Not thread-safe on one Program.
CompiledProgram compile(Program& program, const CompileRequest& request);

// The door into Program for the library's compile path and the caches' memo of a Program value.
struct ProgramInternals {
    static ObjectCode compile_cxx(Program& program, CodeType target,
                                  const std::vector<std::string>& name_expressions, bool pch_allowed,
                                  const CancellationToken* cancellation) {
        return program.compile_cxx(target, name_expressions, pch_allowed, cancellation);
    }
    static ObjectCode compile_ptx_or_nvvm(Program& program, CodeType target,
                                          const std::vector<std::string>& name_expressions) {
        return program.compile_ptx_or_nvvm(target, name_expressions);
    }
    static ProgramKeyMemoSlot* key_memo_slot(const Program& program) noexcept {
        return program.key_memo_.get();
    }
};

}  // namespace cudacore::detail
