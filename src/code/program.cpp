#include "cudacore/program.hpp"
#include "cudacore/program_options.hpp"
#include "support/enum_text.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/owning_handle.hpp"
#include "errors/closed_object.hpp"
#include "code/closable_slot.hpp"
#include "cudacore/linker.hpp"
#include "code/nvvm_compile.hpp"
#include "code/object_code_state.hpp"
#include "loader/compiler_apis.hpp"
#include "loader/driver_api.hpp"
#include "headers/bundle_folder.hpp"
#include "code/compile_hints.hpp"
#include "code/compile_request.hpp"
#include "code/debug_source.hpp"
#include "headers/compile_snapshot.hpp"
#include "code/header_trace.hpp"
#include "headers/include_directives.hpp"
#include "headers/include_lookups.hpp"
#include "code/nvrtc_compile.hpp"
#include "code/ptx_unused_globals.hpp"
#include "headers/pch_directory.hpp"
#include "code/program_key_memo_slot.hpp"
#include "support/cudacore_trace.hpp"
#include "support/temporary_directory.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <chrono>
#include <exception>
#include <memory>
#include <variant>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

namespace cudacore {

namespace detail {
// The compiler's handle of the last compile of a Program or a copy, and what keeps it alive.
struct ProgramCompilerHandle {
    ProgramHandle handle{};
    std::shared_ptr<void> owner;
};
using ProgramHandleSlot = ClosableSlot<ProgramCompilerHandle>;
}  // namespace detail

struct Program::Shared : detail::ProgramHandleSlot {};

namespace {

const char* source_type_name(SourceType type) {
    switch (type) {
        case SourceType::cxx: return "C++";
        case SourceType::ptx: return "PTX";
        case SourceType::nvvm: return "NVVM IR";
    }
    return "unknown";
}

// -dlto asked for, by the option or among the extra flags.
bool asks_for_lto(const ProgramOptions& options) {
    if (options.link_time_optimization.value_or(false)) return true;
    for (const auto& flag : options.extra_flags)
        if (flag == "-dlto" || flag == "--dlto") return true;
    return false;
}

std::string describe(const ProgramOptions& options) { return "program '" + options.name + "'"; }

// The checks compile() and flags() share: which targets each source type can produce.
void require_supported_target(SourceType source_type, CodeType target,
                              const ProgramOptions& options) {
    if (options.remove_unused_globals && (source_type != SourceType::cxx || target != CodeType::ptx)) {
        throw InvalidArgumentError(describe(options) + ": remove_unused_globals rewrites the PTX of a C++ "
                                   "program: compile it to ptx (not " + std::string(to_string(target)) +
                                   "), then make a cubin of that PTX with a PTX Program or a Linker");
    }
    if (source_type != SourceType::nvvm &&
        (!options.extra_sources.empty() || options.use_libdevice.has_value())) {
        throw InvalidArgumentError(describe(options) + ": extra_sources and use_libdevice are for "
                                   "NVVM IR programs (libNVVM links IR modules); a " +
                                   std::string(source_type_name(source_type)) +
                                   " program is one source: link separate programs with a Linker");
    }
    if (source_type == SourceType::nvvm) {
        if (target == CodeType::cubin && options.link_time_optimization.value_or(false)) {
            throw InvalidArgumentError(describe(options) + ": link_time_optimization makes NVVM "
                                       "produce LTO-IR, not cubin; compile to ltoir");
        }
        if (target == CodeType::cubin && options.arch && options.arch->rfind("compute_", 0) == 0) {
            throw InvalidArgumentError(describe(options) + ": a cubin needs a real arch (sm_NN), "
                                       "not the virtual " + *options.arch);
        }
        if (target == CodeType::ptx || target == CodeType::ltoir || target == CodeType::cubin)
            return;
        throw InvalidArgumentError(describe(options) + ": an NVVM IR program compiles to ptx, "
                                   "ltoir or cubin, not " + std::string(to_string(target)));
    }
    if (source_type == SourceType::cxx) {
        if (target == CodeType::cubin && options.link_time_optimization.value_or(false)) {
            throw InvalidArgumentError(describe(options) + ": link_time_optimization makes NVRTC "
                                       "produce LTO-IR, not cubin; compile to ltoir and link "
                                       "with a Linker using link_time_optimization");
        }
        if (target == CodeType::ptx && asks_for_lto(options)) {
            throw InvalidArgumentError(describe(options) + ": -dlto (link_time_optimization) makes "
                                       "NVRTC produce LTO-IR, not PTX; ask for CodeType::ltoir "
                                       "(or compile to ptx without link_time_optimization)");
        }
        if (target == CodeType::cubin && options.arch && options.arch->rfind("compute_", 0) == 0) {
            throw InvalidArgumentError(describe(options) + ": a cubin needs a real arch (sm_NN), "
                                       "not the virtual " + *options.arch);
        }
        if (target == CodeType::ptx || target == CodeType::cubin || target == CodeType::ltoir)
            return;
        throw InvalidArgumentError(describe(options) + ": a C++ program compiles to ptx, cubin or "
                                   "ltoir, not " + std::string(to_string(target)));
    }
    if (target != CodeType::cubin) {
        throw InvalidArgumentError(describe(options) + ": a PTX program compiles to cubin only, not " +
                                   std::string(to_string(target)));
    }
}

struct NvrtcProgramDeleter {
    void operator()(nvrtcProgram program) const noexcept { detail::destroy_nvrtc_program(program); }
};

ProgramHandle to_program_handle(const LinkerHandle& handle) {
    return std::visit([](auto value) -> ProgramHandle { return value; }, handle);
}

// For a compile with header bundles that could not open headers: an error line per header
// naming it and the bundles searched (and the folders, where include_path has some). Empty
// when the log names no header it could not open.
std::string missing_from_bundles(const std::string& log, const ProgramOptions& options) {
    std::string out;
    for (const std::string& name : detail::headers_not_found(log)) {
        out += "error: the header '" + name + "' is in none of the header bundles searched: ";
        for (std::size_t i = 0; i < options.header_bundles.size(); ++i)
            out += (i ? ", " : "") + options.header_bundles[i].describe();
        if (!options.include_path.empty()) {
            out += "; nor in the include folders";
            for (const auto& dir : options.include_path) out += " " + dir;
        }
        out += " (the toolkit's folders are not searched with header bundles: add the header "
               "to a bundle, for example with `cudacore bundle --header " + name + "`, or give the "
               "toolkit's folders as include_path = toolkit_include_dirs())\n";
    }
    return out;
}

// For a compile without bundles that could not open headers on a machine where no toolkit
// include folder was found (a driver-only machine): an error line naming the headers and how to
// ship them. Empty otherwise.
std::string missing_without_toolkit(const std::string& log, const ProgramOptions& options) {
    if (!options.toolkit_include_path || !toolkit_include_dirs().empty()) return {};
    const std::vector<std::string> names = detail::headers_not_found(log);
    if (names.empty()) return {};
    std::string list, flags;
    for (const auto& name : names) {
        list += (list.empty() ? "'" : ", '") + name + "'";
        flags += " --header '" + name + "'";
    }
    return "error: the program needs the header" + std::string(names.size() > 1 ? "s " : " ") +
           list + " and no CUDA toolkit include folder was found ($CUDA_HOME/include, the "
           "build's toolkit, /usr/local/cuda/include): make a header bundle where a toolkit is "
           "installed (cudacore bundle" + flags + " -o headers.ccbundle) and give it to the "
           "program in ProgramOptions::header_bundles\n";
}

// Links a PTX program to cubin. The link state goes to `slot` and its log to `log`, whether the
// link succeeds or not.
ObjectCode link_ptx_program(const std::string& source, const ProgramOptions& options,
                            const std::vector<std::string>& name_expressions,
                            detail::ProgramHandleSlot& slot, std::string& log) {
    if (!name_expressions.empty()) {
        throw InvalidArgumentError(describe(options) +
                                   ": name expressions need a C++ program; a PTX program's "
                                   "kernels are reached by their PTX names");
    }
    slot.keep({});
    auto linker_owner = std::make_shared<Linker>(std::vector{ObjectCode::from_ptx(source, options.name)},
                                                 to_linker_options(options));
    Linker& linker = *linker_owner;
    auto keep_handle = [&] { slot.keep({to_program_handle(linker.handle()), linker_owner}); };
    try {
        ObjectCode linked = linker.link(CodeType::cubin);
        keep_handle();
        log = linker.info_log();
        return ObjectCode::from_cubin(std::string(linked.code()), options.name);
    } catch (const LinkError& e) {
        keep_handle();
        log = e.log();
        throw CompileError(options.name, e.log(), e.options(), linker.backend());
    } catch (...) {
        keep_handle();
        throw;
    }
}

// Whether a C++ compile uses PCH, the flags added to it here (left out of the flags errors
// report), and whether its header bundles are read from their folders instead of memory.
struct PchChoice {
    bool on = false;
    std::vector<std::string> added_flags;
    bool bundles_from_folders = false;
    detail::BundleFolders folders;  // held (so that a cache clear leaves them) for the compile
};

// The bundled names the source's quoted lookups can find beside it: NVRTC looks for a quoted
// #include or __has_include of the main source in its folder first, and for those of a header
// read from that folder, but never for an angle operand, nor for a header read from a bundle's
// or another folder. `all`: any bundled name can be (the source names a file beside it that is no
// bundle's, whose own quoted includes are looked up there too, or an operand a macro makes; or
// the source is NVRTC's own, a wrapped program's, and empty here).
struct QuotedBeside {
    bool all = false;
    std::set<std::string, std::less<>> names;
    std::string unusual_spelling;  // the first operand a folder would read otherwise than memory, if any
};

// Whether one of `bundles` holds `name`.
bool bundled(const std::vector<HeaderBundle>& bundles, std::string_view name) {
    return std::any_of(bundles.begin(), bundles.end(), [&](const HeaderBundle& bundle) { return bundle.find(name); });
}

QuotedBeside quoted_lookups_beside(const std::string& source, const std::vector<HeaderBundle>& bundles,
                                   const std::filesystem::path& main_folder) {
    if (source.empty()) return {.all = true, .names = {}, .unusual_spelling = {}};
    std::set<std::string, std::less<>> wrappers;
    detail::IncludeDirectives found = detail::scan_include_directives(source, wrappers);
    while (!found.has_include_wrappers.empty() && wrappers.size() < found.has_include_wrappers.size()) {
        wrappers.insert(found.has_include_wrappers.begin(), found.has_include_wrappers.end());
        found = detail::scan_include_directives(source, wrappers);
    }
    QuotedBeside beside;
    beside.all = !found.computed_includes.empty() || !found.computed_has_includes.empty();
    for (const detail::IncludeOperand& operand : found.operands) {
        if (beside.unusual_spelling.empty() && detail::folder_reads_otherwise(operand.name)) beside.unusual_spelling = operand.name;
        if (!operand.quoted || beside.all) continue;
        std::error_code ignored;
        if (!bundled(bundles, operand.name) && !operand.name.starts_with('/') &&
            std::filesystem::exists(std::filesystem::symlink_status(main_folder / operand.name, ignored)))
            beside.all = true;
        beside.names.insert(operand.name);
    }
    return beside;
}

// Why a bundled header would not win from its folder: NVRTC looks for a quoted include of the
// main source beside it (in the folder of `nvrtc_name`, the working directory for a bare name)
// before any include folder, while headers given in memory come before every folder. Names the
// first bundled name that a quoted lookup of the source can reach (quoted_lookups_beside) with
// something of that name beside the source; empty when there is none. An angle include is never
// looked up beside the source, so a file there of its name is no reason to leave the folders.
// One stat per name to check (every top-level name of the bundles when any can be reached, and
// one per name below a folder that is there).
// Also names an include spelled so that a folder would read another header than memory
// (folder_reads_otherwise), and a pre-include of a bundled name that the working directory holds
// (NVRTC looks for a pre-include there first, with its folders, and after every header in memory).
std::string shadowed_beside_source(const std::vector<HeaderBundle>& bundles, const std::string& nvrtc_name,
                                   const std::string& source, const std::vector<std::string>& flags) {
    const std::filesystem::path main_folder = std::filesystem::path(nvrtc_name).parent_path();
    const QuotedBeside quoted = quoted_lookups_beside(source, bundles, main_folder);
    if (!quoted.unusual_spelling.empty())
        return "the source includes '" + quoted.unusual_spelling + "', which a folder would read otherwise than memory";
    for (std::size_t i = 0; i < flags.size();) {
        const detail::IncludeFlag flag = detail::include_flag(flags, i);
        i += flag.count;
        if (flag.kind != detail::IncludeFlag::Kind::pre_include) continue;
        if (detail::folder_reads_otherwise(flag.operand))
            return "the pre-include '" + flag.operand + "' would be read otherwise from a folder than from memory";
        std::error_code ignored;
        if (bundled(bundles, flag.operand) && std::filesystem::exists(std::filesystem::symlink_status(flag.operand, ignored)))
            return "'" + flag.operand + "' in the working directory would be read for the pre-include \"" +
                   flag.operand + "\" instead of a header bundle's copy";
    }
    auto there = [&](std::string_view name) {
        std::error_code ignored;
        return std::filesystem::exists(std::filesystem::symlink_status(main_folder / name, ignored));
    };
    for (const HeaderBundle& bundle : bundles) {
        const std::vector<BundledHeader>& headers = bundle.headers();
        for (std::size_t i = 0; i < headers.size(); ++i) {
            const std::string& name = headers[i].name;
            if (!quoted.all && !quoted.names.contains(name)) continue;
            const std::size_t slash = name.find('/');
            if (slash != std::string::npos && !there(std::string_view(name).substr(0, slash))) {
                // Names are sorted: those below this missing folder follow each other.
                const std::string_view folder(name.data(), slash + 1);
                while (i + 1 < headers.size() && headers[i + 1].name.starts_with(folder)) ++i;
                continue;
            }
            if (there(name)) {
                std::string found = (main_folder / name).string();
                found.insert(0, 1, '\'');  // not "'" + found: GCC 12 warns of it (-Wrestrict)
                return found + "' beside the source would be read for \"" + name +
                       "\" instead of the copy of header bundle " + bundle.describe();
            }
        }
    }
    return {};
}

// Header bundles with pch unset: each bundle's folder (bundle_folder.hpp) goes on the include
// path, first and in the bundles' order (the first bundle holding a name wins, before any other
// folder, as in memory), with automatic PCH. The flags the cache key covers do not change: the
// key names each bundle by its digest, whatever folder holds it. When a folder cannot be had, or
// a file beside the source would be found before a bundle's copy (shadowed_beside_source), the
// headers stay in memory without PCH, with one warning. Returns whether the folders are used.
bool read_bundles_from_folders(const ProgramOptions& options, const std::string& nvrtc_name,
                               const std::string& source, std::vector<std::string>& flags, PchChoice& choice,
                               PchStatus& status, const CancellationToken* cancellation) {
    const std::string shadowed = shadowed_beside_source(options.header_bundles, nvrtc_name, source, flags);
    detail::BundleFolders folders;
    // A wait for another process making a folder ends with a cancel (the compile then throws).
    auto cancelled = [cancellation] { return cancellation && cancellation->is_cancelled(); };
    if (shadowed.empty()) folders = detail::bundle_folders(options.header_bundles, cancelled);
    if (cancelled()) throw CompileCancelled(options.name, flags, "NVRTC");
    if (const std::string& problem = shadowed.empty() ? folders.problem : shadowed; !problem.empty()) {
        status = {PchOutcome::not_attempted, "PCH is off: the header bundles are read from memory: " +
                  problem, {}, 0};
        detail::warn_pch_off("header bundles are read from memory: " + problem);
        return false;
    }
    std::vector<std::string> added;
    for (const std::string& folder : folders.paths) added.push_back("--include-path=" + folder);
    flags.insert(flags.begin(), added.begin(), added.end());
    added.emplace_back("--pch");
    flags.emplace_back("--pch");
    if (!options.pch_verbose) {
        added.emplace_back("--pch-verbose=false");
        flags.emplace_back("--pch-verbose=false");
    }
    choice.added_flags = std::move(added);
    choice.bundles_from_folders = true;
    choice.folders = std::move(folders);
    return true;
}

// Adds the folder of automatic PCH (a folder of this process's own, checked for room first:
// NVRTC crashes (SIGBUS) writing a PCH to a full file system), or turns PCH off saying why.
void choose_automatic_pch_dir(std::vector<std::string>& flags, PchChoice& choice, PchStatus& status) {
    const detail::PchDirectory place = detail::automatic_pch_directory(detail::pch_heap_size());
    if (place.problem.empty()) {
        choice.added_flags.push_back("--pch-dir=" + place.path);
        flags.push_back(choice.added_flags.back());
    } else {
        flags = detail::without_pch_flags(flags);
        choice.on = false;
        status = {PchOutcome::not_attempted, "PCH is off: " + place.problem, {}, 0};
        detail::warn_pch_off(place.problem);
    }
}

// Decides PCH for a C++ compile with `flags` (of the program NVRTC knows as `nvrtc_name`),
// taking the PCH flags out of them where PCH is off, and says why in `status` when it is.
PchChoice choose_pch(const ProgramOptions& options, const std::string& nvrtc_name, const std::string& source,
                     bool pch_allowed, std::vector<std::string>& flags, PchStatus& status,
                     const CancellationToken* cancellation) {
    PchChoice choice;
    choice.on = uses_automatic_pch(options) || options.create_pch || options.use_pch;
    const bool bundles = !options.header_bundles.empty();
    // With line or debug information the code names the header files: a folder is given to
    // NVRTC as /proc/self/fd/N, which differs between processes, so such compiles read memory.
    const bool names_files = options.lineinfo.value_or(false) || options.debug.value_or(false);
    // A compile again without PCH reads its bundles where the first did: from their folders, as
    // a plain compile does (a folder and memory find the same headers; where they may not, both
    // read memory).
    if (bundles && !options.pch && !names_files)
        choice.on = read_bundles_from_folders(options, nvrtc_name, source, flags, choice, status, cancellation);
    else if (!choice.on) {
        status = {PchOutcome::not_attempted,
                  !bundles || options.pch ? "PCH is off (ProgramOptions::pch = false)"
                  : names_files ? "PCH is off: with line or debug information the header bundles "
                                  "are read from memory"
                                          : "compiled again without PCH: the PCH it used may be "
                                            "older than an edit of a header it read",
                  {}, 0};
    }
    if (!pch_allowed && choice.on) {
        // The PCH used may be older than an edit of a header it covers (header_trace.hpp).
        flags = detail::without_pch_flags(flags);
        choice.on = false;
        status = {PchOutcome::not_attempted,
                  "compiled again without PCH: the PCH it used may be older than an edit "
                  "of a header it read",
                  {}, 0};
    }
    if (options.pch_heap_size) detail::set_pch_heap_size(*options.pch_heap_size);
    if (choice.on && (uses_automatic_pch(options) || choice.bundles_from_folders) && !options.pch_dir)
        choose_automatic_pch_dir(flags, choice, status);
    return choice;
}

// What one NVRTC compile of a C++ program is given, beside its flags.
struct NvrtcInput {
    const std::string& source;
    const std::string& name;
    const std::vector<std::string>& name_expressions;
    CodeType target;
    const std::string& object;
    nvrtcProgram wrapped;
    const detail::InMemoryHeaders& headers;
    const CancellationToken* cancellation;
};

// Compiles with `flags` (with PCH when `pch`), and when the PCH machinery failed, not the code,
// compiles again without it (`flags` then those it used). `status` says how PCH went.
detail::NvrtcAttempt compile_with_pch_fallback(const NvrtcInput& in, const ProgramOptions& options, bool pch,
                                               std::vector<std::string>& flags, PchStatus& status) {
    const auto began = std::chrono::system_clock::now();
    detail::NvrtcAttempt attempt =
        detail::nvrtc_compile(in.source, in.name, flags, in.name_expressions, in.target, in.object, pch,
                              in.wrapped, /*add_name_expressions=*/true, in.headers, in.cancellation);
    if (!pch || attempt.status == NVRTC_ERROR_CANCELLED) return attempt;
    if (attempt.status != NVRTC_SUCCESS && detail::log_blames_pch(attempt.log)) {
        status = {PchOutcome::failed,
                  "NVRTC failed with PCH, compiled without it: " + detail::pch_error_lines(attempt.log), {}, 0};
        flags = detail::without_pch_flags(flags);
        return detail::nvrtc_compile(in.source, in.name, flags, in.name_expressions, in.target, in.object, false,
                                     in.wrapped, /*add_name_expressions=*/in.wrapped == nullptr, in.headers,
                                     in.cancellation);
    }
    status = detail::pch_outcome(attempt, options);
    if (attempt.pch_create_status == NVRTC_SUCCESS) {  // made here, whether or not one was used
        detail::remember_pch_made(attempt.pch_created_file, began);
    }
    return attempt;
}

// NVRTC writes the time trace to the name given with ".json" appended, and ptxas fails on a trace
// an earlier compile left there ("Parsed trace file not in expected format"): it is replaced.
void remove_earlier_time_trace(const ProgramOptions& options) {
    if (!options.fdevice_time_trace) return;
    std::error_code ignored;
    std::filesystem::remove(*options.fdevice_time_trace + ".json", ignored);
}

// After a compile that read its header bundles from their folders: a folder that no longer holds
// its bundle byte for byte, or in which anything changed since it was checked, was changed
// while NVRTC read it (by hand: a cache clear waits for the compile), so NVRTC may have read
// other headers, or none. Compiles again from memory, without
// PCH, saying why in `status` and in one warning.
void compile_again_if_folders_changed(const NvrtcInput& in, const ProgramOptions& options, const PchChoice& pch,
                                      std::vector<std::string>& flags, PchStatus& status,
                                      detail::NvrtcAttempt& attempt) {
    if (!pch.bundles_from_folders || attempt.status == NVRTC_ERROR_CANCELLED) return;
    const std::string problem = detail::bundle_folders_problem(pch.folders, options.header_bundles);
    if (problem.empty()) return;
    status = {PchOutcome::not_attempted,
              "PCH is off: the header bundles are read from memory: compiled again, as " + problem, {}, 0};
    detail::warn_pch_off("header bundles are read from memory: compiled again, as " + problem);
    for (const std::string& added : pch.added_flags) std::erase(flags, added);
    const detail::InMemoryHeaders headers = detail::in_memory_headers(options.header_bundles);
    attempt = detail::nvrtc_compile(in.source, in.name, flags, in.name_expressions, in.target, in.object, false,
                                    in.wrapped, /*add_name_expressions=*/in.wrapped == nullptr, headers,
                                    in.cancellation);
}

// The log of a failed NVRTC compile as CompileError reports it. Compilation errors and rejected
// options both come with a log naming the problem; the status is added so that an empty log
// still says what failed, and a line on headers it could not find goes first, so that the
// error's message (its first error line) names header and bundles; hints at the options that
// cure the error come last (the message quotes them too).
std::string failed_compile_log(const std::string& nvrtc_log, nvrtcResult status,
                               const ProgramOptions& options) {
    std::string log = nvrtc_log;
    if (!log.empty() && log.back() != '\n') log += '\n';
    const char* status_name = detail::nvrtc().nvrtcGetErrorString(status);
    log += std::string("nvrtcCompileProgram failed: ") + (status_name ? status_name : "error") + "\n";
    log += detail::compile_hints(nvrtc_log, options);
    if (log.back() == '\n') log.pop_back();
    if (!options.header_bundles.empty()) return missing_from_bundles(nvrtc_log, options) + log;
    return missing_without_toolkit(nvrtc_log, options) + log;
}

}  // namespace

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions,
                            std::vector<std::string>& headers_read) {
    check_open("Program::compile");
    headers_read.clear();
    // PTX and NVVM IR include nothing.
    if (source_type_ != SourceType::cxx) return compile(target, name_expressions);
    if (options_.fdevice_time_trace) {
        throw InvalidArgumentError(describe(options_) + ": cannot record the headers a compile "
                                   "reads while fdevice_time_trace is set (the trace is yours)");
    }
    detail::CompiledProgram compiled = detail::compile(
        *this, {target, name_expressions, detail::CompileRequest::Needs::headers_opened});
    if (compiled.headers_error) std::rethrow_exception(compiled.headers_error);
    headers_read = std::move(compiled.headers_opened);
    return std::move(compiled.code);
}

Program::Program(std::string source, SourceType source_type, ProgramOptions options)
    : source_(std::move(source)),
      source_type_(source_type),
      options_(std::move(options)),
      shared_(std::make_shared<Shared>()),
      key_memo_(std::make_shared<detail::ProgramKeyMemoSlot>()) {
    // Refused here, not at compile(): an unknown value would otherwise reach NVRTC as C++.
    if (source_type_ != SourceType::cxx && source_type_ != SourceType::ptx &&
        source_type_ != SourceType::nvvm) {
        throw InvalidArgumentError("Program: unknown source type " +
                                   std::to_string(static_cast<int>(source_type_)) + " for " +
                                   describe(options_) + " (SourceType::cxx, ptx or nvvm)");
    }
    if (source_.find_first_not_of(" \t\r\n") == std::string::npos) {
        throw InvalidArgumentError(std::string("Program: empty ") + source_type_name(source_type_) +
                                   " source for " + describe(options_) +
                                   (source_.empty() ? "" : " (it holds only whitespace)"));
    }
}

Program Program::from_handle(nvrtcProgram program, const ProgramFromHandleOptions& from) {
    if (program == nullptr)
        throw InvalidArgumentError("Program::from_handle: null nvrtcProgram for " +
                                   describe(from.options));
    // The constructor refuses an empty source; NVRTC holds the source of a wrapped program.
    Program wrapped("wrapped", SourceType::cxx, from.options);
    wrapped.source_.clear();
    wrapped.wraps_handle_ = true;
    std::shared_ptr<void> owner;
    if (from.take_ownership) owner = std::shared_ptr<_nvrtcProgram>(program, NvrtcProgramDeleter{});
    wrapped.shared_->keep({program, std::move(owner)});
    return wrapped;
}

Program Program::from_handle(nvrtcProgram program, ProgramOptions options, bool take_ownership) {
    return from_handle(program, ProgramFromHandleOptions{take_ownership, std::move(options)});
}

std::vector<std::string> Program::flags(CodeType target) const {
    check_open("Program::flags");
    require_supported_target(source_type_, target, options_);
    if (source_type_ == SourceType::cxx) return nvrtc_flags(options_, target == CodeType::ltoir);
    if (source_type_ == SourceType::nvvm) return nvvm_flags(options_, target == CodeType::ltoir);
    return Linker({ObjectCode::from_ptx(source_, options_.name)}, to_linker_options(options_))
        .flags();
}

std::string Program::backend() const {
    check_open("Program::backend");
    if (source_type_ == SourceType::cxx) return "NVRTC";
    if (source_type_ == SourceType::nvvm) return "NVVM";
    if (!detail::nvjitlink_available() && detail::driver_available()) return "driver";
    return "nvJitLink";
}

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions) {
    return detail::compile(*this, {target, name_expressions}).code;
}

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions,
                            const CompileOptions& options) {
    check_open("Program::compile");
    if (options.cache) {
        throw InvalidArgumentError("Program::compile: " + describe(options_) + ": a cache in its "
                                   "CompileOptions (Program::compile uses only the cancellation); "
                                   "compile through compile_cached to use a cache");
    }
    detail::CompileRequest request{target, name_expressions};
    request.cancellation = &options.cancellation;
    return detail::compile(*this, request).code;
}

ObjectCode Program::compile_ptx_or_nvvm(CodeType target, const std::vector<std::string>& name_expressions) {
    check_open("Program::compile");
    const detail::CudacoreRange range(tracing::CudacoreCategory::compile, [&] {
        return "compile " + options_.name + " (" + std::string(to_string(target)) + ")";
    });
    log_.clear();
    pch_status_ = {PchOutcome::not_attempted, "PTX programs include no headers", {}, 0};
    require_supported_target(source_type_, target, options_);
    if (source_type_ == SourceType::ptx) {
        return link_ptx_program(source_, options_, name_expressions, *shared_, log_);
    }
    if (source_type_ == SourceType::nvvm) {
        // libNVVM's program is not kept: an NVVM program's handle() is empty (see program.hpp).
        shared_->keep({});
        return compile_nvvm_program(target, name_expressions);
    }

    throw InvalidArgumentError(describe(options_) + ": not a PTX or NVVM IR program");
}

ObjectCode Program::compile_cxx(CodeType target, const std::vector<std::string>& name_expressions,
                                bool pch_allowed, const CancellationToken* cancellation) {
    check_open("Program::compile");
    const detail::CudacoreRange range(tracing::CudacoreCategory::compile, [&] {
        return "compile " + options_.name + " (" + std::string(to_string(target)) + ")";
    });
    log_.clear();
    pch_status_ = {};
    require_supported_target(source_type_, target, options_);
    std::vector<std::string> flags = this->flags(target);
    const std::string object = describe(options_) + " (" + std::string(to_string(target)) + ")";
    // With debug or line information, NVRTC is given the path of a file holding the source as
    // the program's name: the line table names it, so a debugger finds the source.
    const std::filesystem::path debug_source = debug_source_path();
    const std::string nvrtc_name = debug_source.empty() ? options_.name : debug_source.string();
    const PchChoice pch = choose_pch(options_, nvrtc_name, source_, pch_allowed, flags, pch_status_, cancellation);
    // A wrapped program is compiled itself; otherwise the previous compile's program is released
    // now and this one stays for handle().
    nvrtcProgram wrapped = wraps_handle_ ? std::get<nvrtcProgram>(shared_->held().handle) : nullptr;
    if (!wraps_handle_) shared_->keep({});
    // The bundles live in options_ for the whole compile; NVRTC copies the headers it is given.
    const detail::InMemoryHeaders headers = pch.bundles_from_folders
                                                ? detail::InMemoryHeaders{}
                                                : detail::in_memory_headers(options_.header_bundles);
    if (!debug_source.empty()) write_debug_source();
    remove_earlier_time_trace(options_);
    std::vector<std::string> used_flags = flags;
    const NvrtcInput input{source_, nvrtc_name, name_expressions, target, object, wrapped, headers, cancellation};
    detail::NvrtcAttempt attempt = compile_with_pch_fallback(input, options_, pch.on, used_flags, pch_status_);
    compile_again_if_folders_changed(input, options_, pch, used_flags, pch_status_, attempt);
    detail::cudacore_mark(tracing::CudacoreCategory::compile, [&] {
        return "PCH " + std::string(to_string(pch_status_.outcome)) +
               (pch_status_.reason.empty() ? "" : ": " + pch_status_.reason);
    });
    // A bundled header is named as the source includes it, not by the folder NVRTC read.
    if (pch.bundles_from_folders) attempt.log = detail::log_naming_bundled_headers(std::move(attempt.log), pch.folders);
    for (const std::string& added : pch.added_flags)
        if (attempt.status != NVRTC_SUCCESS) std::erase(used_flags, added);
    return detail::ProgramInternals::code_of_attempt(*this, target, attempt, used_flags);
}

ObjectCode detail::ProgramInternals::code_of_attempt(Program& program, CodeType target, NvrtcAttempt& attempt,
                                                     const std::vector<std::string>& used_flags) {
    if (!program.wraps_handle_ && attempt.program) {  // kept whether the compile succeeded or not
        nvrtcProgram made = attempt.program.get();
        program.shared_->keep({made, std::move(attempt.program)});
    }
    program.log_ = std::move(attempt.log);
    const ProgramOptions& options = program.options_;
    if (attempt.status != NVRTC_SUCCESS) {
        if (attempt.status == NVRTC_ERROR_CANCELLED) throw CompileCancelled(options.name, used_flags, "NVRTC");
        throw CompileError(options.name, failed_compile_log(program.log_, attempt.status, options), used_flags,
                           "NVRTC", attempt.status);
    }
    if (options.remove_unused_globals && target == CodeType::ptx)
        attempt.code = without_unused_globals(attempt.code, attempt.symbols);
    ObjectCode code = ObjectCode::from_bytes(target, std::move(attempt.code), options.name,
                                             std::move(attempt.symbols));
    detail::ObjectCodeAccess::state(code)->made_by_nvrtc = true;
    return code;
}

namespace detail {

ObjectCode ProgramInternals::compile_snapshot(Program& program, CodeType target,
                                              const std::vector<std::string>& name_expressions,
                                              const CompileSnapshot& snapshot,
                                              const CancellationToken* cancellation) {
    program.check_open("Program::compile");
    const detail::CudacoreRange range(tracing::CudacoreCategory::compile, [&] {
        return "compile " + program.options_.name + " (" + std::string(to_string(target)) + ")";
    });
    program.log_.clear();
    program.pch_status_ = {PchOutcome::not_attempted,
                           "PCH is off: a cached compile is given its headers from memory", {}, 0};
    require_supported_target(program.source_type_, target, program.options_);
    const std::string object = describe(program.options_) + " (" + std::string(to_string(target)) + ")";
    if (!program.wraps_handle_) program.shared_->keep({});
    InMemoryHeaders headers = in_memory_headers(program.options_.header_bundles);
    for (const auto& header : snapshot.headers) {
        headers.names.push_back(header.name.c_str());
        headers.contents.push_back(header.content.c_str());
    }
    if (!program.debug_source_path().empty()) program.write_debug_source();
    NvrtcAttempt attempt = nvrtc_compile(snapshot.source, snapshot.nvrtc_name, snapshot.flags, name_expressions,
                                         target, object, false, nullptr, true, headers, cancellation);
    cudacore_mark(tracing::CudacoreCategory::compile, [&] {
        return "PCH " + std::string(to_string(program.pch_status_.outcome)) + ": " + program.pch_status_.reason;
    });
    return code_of_attempt(program, target, attempt, snapshot.flags);
}

}  // namespace detail

std::filesystem::path Program::debug_source_path() const {
    // A wrapped nvrtcProgram was named by its creator; PTX and NVVM IR do not go through NVRTC.
    if (source_type_ != SourceType::cxx || wraps_handle_ || !detail::wants_debug_source(options_))
        return {};
    return detail::debug_source_path(source_, options_);
}

void Program::write_debug_source() const {
    check_open("Program::write_debug_source");
    if (const std::filesystem::path path = debug_source_path(); !path.empty())
        detail::write_debug_source(path, source_, options_);
}

std::string to_string(PchOutcome outcome) {
    static constexpr detail::EnumText<PchOutcome> names[] = {
        {PchOutcome::not_attempted, "not_attempted"},
        {PchOutcome::created, "created"},
        {PchOutcome::used, "used"},
        {PchOutcome::failed, "failed"},
    };
    return detail::enum_text(outcome, names, "PchOutcome");
}

ObjectCode Program::compile_nvvm_program(CodeType target,
                                         const std::vector<std::string>& name_expressions) {
    if (!name_expressions.empty()) {
        throw InvalidArgumentError(describe(options_) +
                                   ": name expressions need a C++ program; an NVVM IR program's "
                                   "kernels are reached by their IR names");
    }
    // cubin: NVVM makes PTX, nvJitLink (or the driver) assembles it for the real arch.
    const CodeType nvvm_target = target == CodeType::cubin ? CodeType::ptx : target;
    const std::vector<std::string> flags = nvvm_flags(options_, nvvm_target == CodeType::ltoir);
    detail::NvvmOutput out = detail::compile_nvvm(source_, options_, flags);
    log_ = out.log;
    if (target != CodeType::cubin) {
        return ObjectCode::from_bytes(target, std::move(out.code), options_.name);
    }
    LinkerOptions link_options;
    link_options.name = options_.name;
    link_options.arch = resolve_arch(options_);
    link_options.isolated = options_.isolated_link;
    Linker linker({ObjectCode::from_ptx(std::move(out.code), options_.name)}, link_options);
    try {
        ObjectCode linked = linker.link(CodeType::cubin);
        if (!linker.info_log().empty()) log_ += (log_.empty() ? "" : "\n") + linker.info_log();
        return ObjectCode::from_cubin(std::string(linked.code()), options_.name);
    } catch (const LinkError& e) {
        throw CompileError(options_.name, e.log(), e.options(), "NVVM + " + linker.backend());
    }
}

void Program::close() noexcept {
    if (shared_) shared_->close();
}

bool Program::is_closed() const noexcept { return shared_ && shared_->closed(); }

ProgramHandle Program::handle() const noexcept { return shared_ ? shared_->held().handle : ProgramHandle{}; }

void Program::check_open(const char* operation) const {
    if (!shared_) [[unlikely]]
        detail::throw_moved_from_error(operation, owning_names<Program>.type, owning_names<Program>.holds);
    if (shared_->closed()) [[unlikely]]
        detail::throw_closed_object_error(operation, describe(options_).c_str(), owning_names<Program>.type);
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(SourceType type) {
    static constexpr detail::EnumText<SourceType> names[] = {
        {SourceType::cxx, "cxx"},
        {SourceType::ptx, "ptx"},
        {SourceType::nvvm, "nvvm"},
    };
    return detail::enum_text(type, names, "SourceType");
}

}  // namespace cudacore
