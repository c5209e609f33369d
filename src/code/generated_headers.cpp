#include "cudacore/generated_headers.hpp"

#include "code/nvrtc_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

namespace cudacore {
namespace {

// `options` with the folder of the headers answered so far last on the include path.
ProgramOptions with_folder(const ProgramOptions& options, const std::vector<BundledHeader>& answers) {
    ProgramOptions out = options;
    const HeaderBundle bundle = HeaderBundle::from_headers(answers, "generated headers of '" + options.name + "'");
    out.include_path.push_back(bundle.folder().string());
    return out;
}

// The headers the front end could not open for `program` given `answers` in memory (none: it
// parsed, or failed otherwise).
std::vector<std::string> missing_headers(const Program& program, const std::vector<BundledHeader>& answers,
                                         const CancellationToken& cancellation) {
    std::vector<std::string> flags;
    try {
        flags = program.flags(CodeType::ptx);
    } catch (const InvalidArgumentError&) {
        flags = program.flags(CodeType::ltoir);  // a program that asks for LTO-IR makes no PTX
    }
    flags = detail::without_pch_flags(flags);
    flags.emplace_back("--fdevice-syntax-only");
    const std::filesystem::path debug_source = program.debug_source_path();
    const std::string name = debug_source.empty() ? program.options().name : debug_source.string();
    detail::InMemoryHeaders headers = detail::in_memory_headers(program.options().header_bundles);
    for (const BundledHeader& answer : answers) {
        headers.names.push_back(answer.name.c_str());
        headers.contents.push_back(answer.content.c_str());
    }
    const detail::NvrtcAttempt attempt =
        detail::nvrtc_compile(program.source(), name, flags, {}, CodeType::ptx,
                              "program '" + program.options().name + "' (the headers it is missing)", false,
                              nullptr, true, headers, &cancellation);
    if (attempt.status == NVRTC_ERROR_CANCELLED)
        throw CompileCancelled(program.options().name, flags, "NVRTC");
    if (attempt.status == NVRTC_SUCCESS) return {};
    return detail::headers_not_found(attempt.log);
}

std::optional<std::string> ask(const HeaderCallback& callback, const std::string& header, const std::string& program) {
    try {
        return callback(header);
    } catch (const std::exception& e) {
        throw Error("with_generated_headers: the header callback threw for \"" + header + "\" (program '" + program +
                    "'): " + e.what());
    } catch (...) {
        throw Error("with_generated_headers: the header callback threw for \"" + header + "\" (program '" + program +
                    "'): an exception of unknown type");
    }
}

}  // namespace

Program with_generated_headers(const Program& program, const HeaderCallback& callback,
                               const CancellationToken& cancellation) {
    const std::string& name = program.options().name;
    if (program.source_type() != SourceType::cxx || program.source().empty())
        throw InvalidArgumentError("with_generated_headers: program '" + name +
                                   "' is not a C++ program with a source (only those include headers)");
    if (!callback) return program;
    // Asked in memory (as NVRTC matches an include by its operand), written out once at the end.
    std::vector<BundledHeader> answers;
    for (;;) {
        if (cancellation.is_cancelled()) throw CompileCancelled(name, {}, "NVRTC");
        const std::vector<std::string> missing = missing_headers(program, answers, cancellation);
        if (missing.empty()) break;
        const std::string& header = missing.front();  // the front end stops at the first
        if (std::any_of(answers.begin(), answers.end(), [&](const BundledHeader& h) { return h.name == header; }))
            throw Error("with_generated_headers: program '" + name + "': the header callback's \"" + header +
                        "\" is still not found (its name must be the one the #include asks for)");
        std::optional<std::string> text = ask(callback, header, name);
        if (!text) break;  // the compile of the program returned names the header
        answers.push_back({header, std::move(*text)});
    }
    if (answers.empty()) return program;
    return Program(program.source(), SourceType::cxx, with_folder(program.options(), answers));
}

}  // namespace cudacore
