/// @file
/// Loading code with options: the JIT options the driver's PTX compiler takes when it loads PTX
/// into a library, and the logs it returns. The options apply to the value's one lazy load, so
/// load_with_options must be its first load (code loaded already: InvalidArgumentError); a
/// failure is thrown again by every later use. A cubin ignores them. Thread-safety: as
/// ObjectCode::load.
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
    /// ptxas's optimisation level, 0 to 4 (CU_JIT_OPTIMIZATION_LEVEL; the driver's default: 4).
    std::optional<int> optimization_level{};
    /// The most registers a thread may use (CU_JIT_MAX_REGISTERS).
    std::optional<unsigned> max_registers{};
    /// Compile for blocks of at least this many threads (CU_JIT_THREADS_PER_BLOCK), not 0.
    std::optional<unsigned> threads_per_block{};
    /// Caching of global loads (CU_JIT_CACHE_MODE): CU_JIT_CACHE_OPTION_NONE (the default),
    /// CU_JIT_CACHE_OPTION_CG (cache in L2, not L1) or CU_JIT_CACHE_OPTION_CA (L1 and L2).
    std::optional<CUjit_cacheMode> cache_mode{};
    bool generate_debug_info = false;  ///< CU_JIT_GENERATE_DEBUG_INFO (-G)
    bool generate_line_info = false;   ///< CU_JIT_GENERATE_LINE_INFO (-lineinfo)
    bool verbose_log = false;          ///< CU_JIT_LOG_VERBOSE: ptxas's resource usage in info_log
    /// Room for each of the two logs, in bytes (1 to 16 MiB); a longer log is cut.
    std::size_t log_bytes = 16384;
};

/// What a load said.
struct LoadReport {
    /// The JIT's information log (CU_JIT_INFO_LOG_BUFFER). Empty when the driver took the code
    /// from its own JIT cache (the same PTX, options and driver compiled before, by any process:
    /// $CUDA_CACHE_PATH, CUDA_CACHE_DISABLE=1 turns it off): nothing was compiled to report.
    std::string info_log{};
    std::string error_log{};  ///< its error log (CU_JIT_ERROR_LOG_BUFFER); warnings when it loaded
};

/// Loads `code` (as ObjectCode::load does: into the current device's context) with `options`,
/// and returns the logs. InvalidArgumentError before the driver for an option out of range
/// (naming it) and for code already loaded; what ObjectCode::load throws otherwise, a
/// DriverError for PTX that does not compile carrying the error log in its message. Keeps
/// nothing beyond what ObjectCode::load keeps (the library, held by the value and its kernels).
LoadReport load_with_options(const ObjectCode& code, const LoadOptions& options);

}  // namespace cudacore
