// current_device_arch (declared in cudacore/program_options.hpp): the arch a Program or Linker
// without one compiles for. The runtime's, since it asks the current device.
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program_options.hpp"
#include "cudacore/system.hpp"
#include "loader/driver_api.hpp"

#include <string>

namespace cudacore {

std::string current_device_arch(const char* what_needs_it) {
    std::string reason;
    if (!detail::driver_available()) {
        reason = "no CUDA driver is present";
    } else {
        try {
            if (system::device_count() > 0) return Device::current().arch();
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
