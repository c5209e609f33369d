// Loading code with JIT options (load_options.hpp): the options checked here, the load made by
// the lazy load's first call (object_code_loading.cpp, detail::load_first_with).
#include "cudacore/load_options.hpp"

#include "cudacore/errors.hpp"
#include "runtime/library_box.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace cudacore {

namespace {

constexpr std::size_t kMostLogBytes = std::size_t{16} << 20;

// Why `options` cannot be used, or empty.
std::string option_problem(const LoadOptions& options) {
    if (options.optimization_level && (*options.optimization_level < 0 || *options.optimization_level > 4))
        return "optimization_level " + std::to_string(*options.optimization_level) + " is not 0 to 4";
    if (options.threads_per_block && *options.threads_per_block == 0) return "threads_per_block is 0";
    if (options.max_registers && *options.max_registers == 0) return "max_registers is 0";
    if (options.cache_mode) {
        // Read as its bits: a value outside the enum's range must not be loaded as the enum.
        std::underlying_type_t<CUjit_cacheMode> mode{};
        std::memcpy(&mode, &*options.cache_mode, sizeof mode);
        if (mode != CU_JIT_CACHE_OPTION_NONE && mode != CU_JIT_CACHE_OPTION_CG && mode != CU_JIT_CACHE_OPTION_CA)
            return "cache_mode " + std::to_string(mode) + " is not a CUjit_cacheMode";
    }
    if (options.log_bytes == 0 || options.log_bytes > kMostLogBytes)
        return "log_bytes " + std::to_string(options.log_bytes) + " is not 1 to " +
               std::to_string(kMostLogBytes);
    return {};
}

}  // namespace

LoadReport load_with_options(const ObjectCode& code, const LoadOptions& options) {
    const std::shared_ptr<detail::ObjectCodeState>& state = detail::ObjectCodeAccess::state(code);
    detail::check_open(*state, "load_with_options");
    if (const std::string problem = option_problem(options); !problem.empty())
        throw InvalidArgumentError("load_with_options: " + problem + " (loading " +
                                   detail::describe_code(*state) + ")");
    LoadReport report;
    if (!detail::load_first_with(*state, options, report))
        throw InvalidArgumentError(
            "load_with_options: " + detail::describe_code(*state) +
            " is loaded already (by ObjectCode::load, get_kernel, an earlier load_with_options or "
            "from_handle, on this value or a copy): its options apply to the first load only; "
            "make a new ObjectCode from the bytes to load them again with these options");
    return report;
}

}  // namespace cudacore
