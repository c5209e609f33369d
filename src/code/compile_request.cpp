#include "code/compile_request.hpp"

#include "cudacore/cancellation.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/compiler_flags.hpp"
#include "headers/header_trace.hpp"
#include "headers/include_lookups.hpp"

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

CompiledProgram compile(Program& program, const CompileRequest& request) {
    throw_if_cancelled(program, request.target, request.cancellation);
    CompiledProgram compiled = compile_uncancelled(program, request);
    // Cancelled after the compilers were done: the code is dropped all the same, so that a
    // cancelled compile never returns (nor a cache stores) anything.
    throw_if_cancelled(program, request.target, request.cancellation);
    return compiled;
}

namespace {

// Long because: the compile, its header pass beside it, and the view taken around both are one
// sequence whose order is the point (see compile_request.hpp).
CompiledProgram compile_uncancelled(Program& program, const CompileRequest& request) {
    const bool cxx = program.source_type() == SourceType::cxx;
    const CancellationToken* cancellation = request.cancellation;
    if (request.needs == CompileRequest::Needs::code || !cxx) {
        ObjectCode code = cxx ? ProgramInternals::compile_cxx(program, request.target,
                                                             request.name_expressions, true, cancellation)
                              : ProgramInternals::compile_ptx_or_nvvm(program, request.target,
                                                                      request.name_expressions);
        CompiledProgram compiled{std::move(code)};
        if (request.needs == CompileRequest::Needs::view) compiled.view = FileView{};
        return compiled;
    }
    // Where NVRTC searches, and what each folder was, before anything is read.
    const bool view = request.needs == CompileRequest::Needs::view;
    std::optional<IncludeSearch> search;
    std::optional<CompileStart> start;
    if (view) {
        search = include_search(program.options().name, nvrtc_flags(program.options()));
        start = compile_start(*search);
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
    compiled.search = search;
    try {
        compiled.headers_opened = pass.get();
    } catch (...) {
        compiled.headers_error = std::current_exception();
        return compiled;
    }
    auto compile_without_pch = [&] {
        compiled.code = ProgramInternals::compile_cxx(program, request.target, request.name_expressions, false,
                                                      cancellation);
    };
    if (!view) {
        // Code from a PCH only when no header listed changed near or after its making.
        if (pch_may_be_stale(program.pch_status(), compiled.headers_opened)) compile_without_pch();
        return compiled;
    }
    auto take_view = [&] {
        compiled.view = take_file_view(*search, program.options().name, program.source(),
                                       compiled.headers_opened, toolkit_include_dirs(), *start);
    };
    take_view();
    // Code a cache keeps comes from a PCH only when the PCH was made from the files of this view
    // (header_trace.hpp); else it is made again without, and the view taken again after it.
    if (!pch_view_holds(program.pch_status(), *search)) {
        compile_without_pch();
        take_view();
    }
    if (program.pch_status().outcome == PchOutcome::created)
        remember_pch_view(program.pch_status().file, *compiled.view, *search);
    return compiled;
}

}  // namespace

}  // namespace cudacore::detail
