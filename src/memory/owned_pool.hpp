// Pools cudacore creates (cuMemPoolCreate) for owned, IPC and pinned pool resources.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore::detail {

// cuMemPoolCreate with `location`, `max_size` (0: driver default) and `handle_types`; throws
// DriverError naming `object`.
CUmemoryPool create_pool(const CUmemLocation& location, std::size_t max_size,
                         unsigned handle_types, const std::string& object);

}  // namespace cudacore::detail
