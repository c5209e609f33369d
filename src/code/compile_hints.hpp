// The options that cure a failed compile's error, when its log shows one cudacore knows (an
// unannotated function without device_as_default_execution_space, a standard header without
// std_headers, jitify's -remove-unused-globals flag). Internal: added to the log of the CompileError a failed NVRTC compile throws.
#pragma once

#include "cudacore/program_options.hpp"

#include <string>

namespace cudacore::detail {

// A line per hint, each beginning with kCompileHintPrefix (errors/compile_hint.hpp), for
// `nvrtc_log` of a compile with `options`; empty when none applies. Throws std::bad_alloc only.
std::string compile_hints(const std::string& nvrtc_log, const ProgramOptions& options);

}  // namespace cudacore::detail
