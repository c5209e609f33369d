#include "code/compile_request.hpp"

#include "cudacore/program_options.hpp"
#include "cudacore/compiler_flags.hpp"
#include "headers/header_trace.hpp"
#include "headers/include_lookups.hpp"

#include <future>
#include <utility>

namespace cudacore::detail {

CompiledProgram compile(Program& program, const CompileRequest& request) {
    const bool cxx = program.source_type() == SourceType::cxx;
    if (request.needs == CompileRequest::Needs::code || !cxx) {
        ObjectCode code = cxx ? ProgramInternals::compile_cxx(program, request.target,
                                                             request.name_expressions, true)
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
    std::future<std::vector<std::string>> pass = start_headers_opened(program, request.target);
    CompiledProgram compiled{ProgramInternals::compile_cxx(program, request.target,
                                                           request.name_expressions, true)};
    compiled.search = search;
    try {
        compiled.headers_opened = pass.get();
    } catch (...) {
        compiled.headers_error = std::current_exception();
        return compiled;
    }
    auto compile_without_pch = [&] {
        compiled.code = ProgramInternals::compile_cxx(program, request.target, request.name_expressions, false);
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

}  // namespace cudacore::detail
