// Finding the device a descriptor names: processes number devices differently
// (CUDA_VISIBLE_DEVICES), so descriptors carry the device's UUID.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/ipc_descriptor.hpp"

#include <string>

namespace cudacore::detail {

// The device of this process with `uuid`; InvalidArgumentError naming `object` when none has it.
Device device_with_uuid(const IpcId& uuid, const std::string& object);

}  // namespace cudacore::detail
