// Advice applied by ManagedMemoryResource to each allocation.
#pragma once

#include "cudacore/managed_memory_resource.hpp"

#include <cuda.h>

#include <functional>
#include <string>

namespace cudacore::detail {

// Applies the options' advice to `size` bytes at `pointer`; on failure frees them (cuMemFree)
// and throws DriverError naming the advice and describe().
void apply_managed_options(CUdeviceptr pointer, std::size_t size,
                           const ManagedMemoryResourceOptions& options,
                           const std::function<std::string()>& describe);

}  // namespace cudacore::detail
