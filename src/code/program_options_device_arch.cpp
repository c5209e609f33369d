// current_device_arch (declared in cudacore/program_options.hpp): the arch a Program or Linker
// without one compiles for, asked of the driver through the loader as Device::current().arch()
// asks it: the device of the calling thread's current context, else device 0, through the same
// kept answers (loader/device_queries.hpp). Here, not in the runtime, so that the code layer
// references no symbol of a higher one (scripts/check-layer-symbols.py).
#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "loader/device_queries.hpp"
#include "loader/driver_api.hpp"

#include <string>

namespace cudacore {

std::string current_device_arch(const char* what_needs_it) {
    std::string reason;
    if (!detail::driver_available()) {
        reason = "no CUDA driver is present";
    } else {
        try {
            if (detail::device_count() > 0) {
                const int packed = detail::compute_capability(detail::current_ordinal());
                return "sm_" + std::to_string(packed / 1000) + std::to_string(packed % 1000);
            }
            reason = "no CUDA device is present";
        } catch (const Error& e) {
            reason = e.what();
        }
    }
    throw InvalidArgumentError(std::string(what_needs_it) +
                               ": arch is not set and the current device's arch cannot be used (" +
                               reason + "); set arch, for example \"sm_90\"");
}

}  // namespace cudacore
