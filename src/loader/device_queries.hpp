// What the driver says about the process's devices that never changes while it runs (the count,
// each ordinal's CUdevice and compute capability), asked once and kept; and the calling thread's
// current device. Shared by the runtime's Device and the code layer's current_device_arch, which
// may not reach the runtime. Internal.
#pragma once

#include <cuda.h>

#include <optional>
#include <vector>

namespace cudacore::detail {

// The number of devices (cuDeviceGetCount), asked once (again after a failure). Throws what
// driver() and check() throw. Thread-safe.
int device_count();

// Every device's CUdevice by ordinal, asked once (CUDA_VISIBLE_DEVICES is read when the driver
// starts). Throws as device_count(); a failure is asked again next time. Thread-safe.
const std::vector<CUdevice>& device_handles();

// The ordinal of the device whose handle is `device`, or nullopt.
std::optional<int> ordinal_of(CUdevice device);

// The compute capability of a valid `ordinal`, packed as major * 1000 + minor; asked once per
// ordinal below 64. Throws DriverError (naming the device) when the driver refuses.
int compute_capability(int ordinal);

// The device of the calling thread's current context, or 0 when no context is current (or its
// device cannot be numbered), as Device::current() documents. Throws DriverError.
int current_ordinal();

}  // namespace cudacore::detail
