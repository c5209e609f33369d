// Finding the device a descriptor names: processes number devices differently
// (CUDA_VISIBLE_DEVICES), so descriptors carry the device's UUID.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/ipc_descriptor.hpp"

#include <functional>
#include <optional>
#include <string>

namespace cudacore::detail {

// The ordinal of this process's device with `uuid`, or nullopt. The devices' UUIDs are read once
// per process (they cannot change while it runs), so an import asks the driver nothing here.
// Thread-safe; throws NoDriverError / DriverError only on the first call's read.
std::optional<int> ordinal_with_uuid(const IpcId& uuid);

// The device of this process with `uuid`; InvalidArgumentError naming `object()` (made only
// then) when none has it.
Device device_with_uuid(const IpcId& uuid, const std::function<std::string()>& object);

}  // namespace cudacore::detail
