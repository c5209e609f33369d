/// @file
/// Loading code with options: the JIT options of the driver's PTX compiler and the logs it
/// returns. A cubin ignores them.
///
///     LoadReport report = load_with_options(code, {.optimization_level = 3, .max_registers = 64});
///     std::printf("%s", report.info_log.c_str());  // ptxas's "Used 32 registers, ..."
#pragma once

#include "cudacore/object_code.hpp"

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

namespace cudacore {

/// The JIT options of a load (cuLibraryLoadData's jitOptions), each passed only when set.
struct LoadOptions {
    /// ptxas's optimisation level, 0 to 4 (the driver's default: 4).
    std::optional<int> optimization_level{};
    /// The most registers a thread may use.
    std::optional<unsigned> max_registers{};
    /// Compile for blocks of at least this many threads (not 0).
    std::optional<unsigned> threads_per_block{};
    /// Caching of global loads (CU_JIT_CACHE_OPTION_NONE, _CG or _CA).
    std::optional<CUjit_cacheMode> cache_mode{};
    bool generate_debug_info = false;  ///< CU_JIT_GENERATE_DEBUG_INFO (-G)
    bool generate_line_info = false;   ///< CU_JIT_GENERATE_LINE_INFO (-lineinfo)
    bool verbose_log = false;          ///< CU_JIT_LOG_VERBOSE: ptxas's resource usage in info_log
    /// Room for each of the two logs, in bytes (1 to 16 MiB); a longer log is cut.
    std::size_t log_bytes = 16384;
};

/// What a load said.
struct LoadReport {
    /// The JIT's information log; empty when the driver's JIT cache served the code.
    std::string info_log{};
    std::string error_log{};  ///< its error log (CU_JIT_ERROR_LOG_BUFFER); warnings when it loaded
};

/// Loads `code` with `options` (its first load) and returns the logs. InvalidArgumentError (an
/// option out of range, code loaded already); else as ObjectCode::load, thread safety included.
LoadReport load_with_options(const ObjectCode& code, const LoadOptions& options);

}  // namespace cudacore
