#include "code/compile_hints.hpp"

#include "code/nvrtc_compile.hpp"
#include "cudacore/standard_headers.hpp"
#include "errors/compile_hint.hpp"
#include "headers/standard_headers.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace cudacore::detail {

namespace {

// NVRTC's words for a function or a variable without __host__/__device__ in JIT mode ("host
// functions are not allowed in JIT mode", "host variables are not allowed...": NVRTC 12 and 13).
constexpr const char* kHostCodeRefused = " are not allowed in JIT mode";

// The standard headers the log says were not found, as "<a>, <b>".
std::string standard_headers_missing(const std::string& nvrtc_log) {
    const HeaderBundle standard = standard_headers();
    std::string list;
    for (const std::string& name : headers_not_found(nvrtc_log)) {
        for (const BundledHeader& header : standard.headers()) {
            if (header.name != name) continue;
            list += (list.empty() ? "<" : ", <") + name + ">";
            break;
        }
    }
    return list;
}

}  // namespace

std::string compile_hints(const std::string& nvrtc_log, const ProgramOptions& options) {
    std::string hints;
    const std::string prefix(kCompileHintPrefix);
    if (nvrtc_log.find(kHostCodeRefused) != std::string::npos && !options.device_as_default_execution_space) {
        hints += prefix + "set ProgramOptions::device_as_default_execution_space = true (-default-device) to "
                          "compile functions and variables without __host__ or __device__ as device ones, as "
                          "jitify does (docs/compiling.md, \"Defaults\")\n";
    }
    // jitify's own flag, which NVRTC does not know.
    if (nvrtc_log.find("unrecognized option -remove-unused-globals") != std::string::npos ||
        nvrtc_log.find("unrecognized option --remove-unused-globals") != std::string::npos) {
        hints += prefix + "set ProgramOptions::remove_unused_globals = true instead of jitify's -remove-unused-globals "
                          "flag, and compile to ptx (docs/compiling.md, \"Unused globals\")\n";
    }
    const std::string missing = standard_headers_missing(nvrtc_log);
    if (!missing.empty() && options.header_bundles.empty() && !options.std_headers) {
        hints += prefix + "set ProgramOptions::std_headers = true for cudacore's " + missing +
                 " (docs/compiling.md, \"Standard headers\")\n";
    } else if (!missing.empty() && options.std_headers && options.header_bundles.empty()) {
        // Asked for, but their folder could not be had: the compile went on without them.
        if (const std::string problem = standard_headers_folder_problem(); !problem.empty()) {
            hints += prefix + "the standard headers (ProgramOptions::std_headers) are off in this process: " +
                     problem + "; set CUDACORE_CACHE_DIR to a writable folder, or give them from memory: "
                               "header_bundles = {standard_headers()} and include_path = toolkit_include_dirs() "
                               "(docs/compiling.md, \"Standard headers\")\n";
        }
    } else if (!missing.empty() && !options.header_bundles.empty()) {
        hints += prefix + "add standard_headers() to ProgramOptions::header_bundles for cudacore's " + missing +
                 " (docs/compiling.md, \"Standard headers\")\n";
    }
    // A folder that went away (a bundle folder `cudacore cache clear` removed, with_generated_headers'
    // too): the log only says a header is missing.
    if (!headers_not_found(nvrtc_log).empty()) {
        for (const std::string& folder : options.include_path) {
            std::error_code ignored;
            if (std::filesystem::is_directory(folder, ignored)) continue;
            hints += prefix + "the include folder '" + folder + "' (ProgramOptions::include_path) is not there; "
                              "`cudacore cache clear` removes header bundle folders, those with_generated_headers "
                              "puts on include_path too: make such a Program again\n";
        }
    }
    return hints;
}

}  // namespace cudacore::detail
