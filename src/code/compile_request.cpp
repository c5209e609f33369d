#include "code/compile_request.hpp"

#include "cudacore/program_options.hpp"
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
    try {
        compiled.headers_opened = pass.get();
    } catch (...) {
        compiled.headers_error = std::current_exception();
        return compiled;
    }
    // Code that a cache keeps comes from a PCH only when the files that PCH was made from are
    // known and still as they were; other code from a PCH only when no header listed changed
    // near or after its making (header_trace.hpp).
    const bool stale = view ? !pch_view_holds(program.pch_status(), *search)
                            : pch_may_be_stale(program.pch_status(), compiled.headers_opened);
    if (stale) {
        compiled.code = ProgramInternals::compile_cxx(program, request.target,
                                                      request.name_expressions, false);
    }
    if (view) {
        compiled.view = take_file_view(*search, program.options().name, program.source(),
                                       compiled.headers_opened, toolkit_include_dirs(), *start);
        if (program.pch_status().outcome == PchOutcome::created)
            remember_pch_view(program.pch_status().file, *compiled.view, *search);
    }
    return compiled;
}

}  // namespace cudacore::detail
