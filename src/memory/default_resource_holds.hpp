// The holds on a primary context that a reset may ignore: the device's default memory resource
// (Device::memory_resource), kept for the process, while nothing else holds it. It follows the
// new context after a reset (device_memory.cpp makes it again).
#pragma once

#include "runtime/runtime_handles.hpp"

namespace cudacore::detail {

// How many of `primary`'s holders are default memory resources of its device held by nothing
// but their registry (0, 1 or, for a device without pools, the synchronous one: 1).
int idle_default_resource_holds(const ContextBox& primary);

}  // namespace cudacore::detail
