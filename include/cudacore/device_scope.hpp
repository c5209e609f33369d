/// @file
/// DeviceScope: makes a device's primary context current on the calling thread for a scope (held
/// meanwhile), then puts back whatever was current before.
///
///     {
///         DeviceScope on(Device(1));
///         Buffer b = Device(1).allocate(size, stream1);   // code that uses the current context
///     }                                                   // the previous context is current again
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

namespace cudacore {

/// Makes a device current for a scope. Scopes nest, each destroyed on its thread, innermost first.
class DeviceScope {
public:
    /// Retains `device`'s primary context and pushes it current; NoDriverError, DriverError.
    explicit DeviceScope(const Device& device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

    const Device& device() const noexcept { return device_; }  ///< the device made current

private:
    Device device_;
    Context context_;
};

}  // namespace cudacore
