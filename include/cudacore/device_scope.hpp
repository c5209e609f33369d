/// @file
/// DeviceScope: makes a device current on the calling thread for a scope, then puts back whatever
/// was current before (cuCtxPushCurrent / cuCtxPopCurrent of the device's primary context).
///
///     {
///         DeviceScope on(Device(1));
///         Buffer b = Device(1).allocate(size, stream1);   // code that uses the current context
///     }                                                   // the previous context is current again
///
/// The primary context stays retained for the scope. Scopes nest; each must be destroyed on the
/// thread that made it, innermost first (as a local variable is). Construction throws
/// NoDriverError / DriverError; destruction never throws.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

namespace cudacore {

/// Makes a device current for a scope and restores the previous context after it.
class DeviceScope {
public:
    /// Retains `device`'s primary context and pushes it current (cuCtxPushCurrent).
    explicit DeviceScope(const Device& device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

    /// The device made current.
    const Device& device() const noexcept { return device_; }

private:
    Device device_;
    Context context_;
};

}  // namespace cudacore
