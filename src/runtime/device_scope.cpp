// DeviceScope: makes a device's primary context current for a scope, and restores the previous one.
#include "cudacore/device_scope.hpp"

#include "loader/driver_api.hpp"

#include <string>

namespace cudacore {

DeviceScope::DeviceScope(const Device& device) : device_(device), context_(device.context()) {
    detail::check(detail::driver().cuCtxPushCurrent(context_.handle()), "cuCtxPushCurrent",
                  [&] { return "primary context of device " + std::to_string(device_.ordinal()); });
}

DeviceScope::~DeviceScope() {
    const detail::DriverApi* api = detail::driver_if_loaded();
    if (!api) return;
    CUcontext popped = nullptr;
    api->cuCtxPopCurrent(&popped);  // errors ignored: a destructor never throws
}

}  // namespace cudacore
