#include "code/compile_request.hpp"

#include "cudacore/cancellation.hpp"
#include "cudacore/program_options.hpp"
#include "code/header_trace.hpp"
#include "headers/standard_headers.hpp"

#include <future>
#include <utility>

namespace cudacore::detail {

namespace {

// CompileCancelled for `program` when `cancellation` is cancelled.
void throw_if_cancelled(const Program& program, CodeType target, const CancellationToken* cancellation) {
    if (cancellation && cancellation->is_cancelled())
        throw CompileCancelled(program.options().name, program.flags(target), program.backend());
}

CompiledProgram compile_uncancelled(Program& program, const CompileRequest& request);

}  // namespace

void await_standard_headers(const Program& program, const CancellationToken* cancellation) {
    if (!cancellation || program.source_type() != SourceType::cxx || !program.options().std_headers) return;
    await_standard_headers_folder([cancellation] { return cancellation->is_cancelled(); });
    if (cancellation->is_cancelled()) throw CompileCancelled(program.options().name, {}, program.backend());
}

CompiledProgram compile(Program& program, const CompileRequest& request) {
    await_standard_headers(program, request.cancellation);
    throw_if_cancelled(program, request.target, request.cancellation);
    CompiledProgram compiled = compile_uncancelled(program, request);
    // Cancelled after the compilers were done: the code is dropped all the same, so that a
    // cancelled compile never returns (nor a cache stores) anything.
    throw_if_cancelled(program, request.target, request.cancellation);
    return compiled;
}

namespace {

CompiledProgram compile_uncancelled(Program& program, const CompileRequest& request) {
    const bool cxx = program.source_type() == SourceType::cxx;
    const CancellationToken* cancellation = request.cancellation;
    if (request.needs == CompileRequest::Needs::code || !cxx) {
        ObjectCode code = cxx ? ProgramInternals::compile_cxx(program, request.target,
                                                             request.name_expressions, true, cancellation)
                              : ProgramInternals::compile_ptx_or_nvvm(program, request.target,
                                                                      request.name_expressions);
        return CompiledProgram{std::move(code)};
    }
    std::future<std::vector<std::string>> pass = start_headers_opened(program, request.target, cancellation);
    std::optional<ObjectCode> code;
    try {
        code = ProgramInternals::compile_cxx(program, request.target, request.name_expressions, true,
                                             cancellation);
    } catch (...) {
        // The pass uses `program`: it ends (soon, when cancelled) before the error leaves.
        try {
            pass.wait();
        } catch (...) {
        }
        throw;
    }
    CompiledProgram compiled{std::move(*code)};
    try {
        compiled.headers_opened = pass.get();
    } catch (...) {
        compiled.headers_error = std::current_exception();
        return compiled;
    }
    // Code from a PCH only when no header listed changed near or after its making.
    if (pch_may_be_stale(program.pch_status(), compiled.headers_opened))
        compiled.code = ProgramInternals::compile_cxx(program, request.target, request.name_expressions, false,
                                                      cancellation);
    return compiled;
}

}  // namespace

}  // namespace cudacore::detail
