/// @file
/// Grids made for you: from the size of the work (one thread per element, rounded up to whole
/// blocks: kernels still guard with `if (i < n)`), or from a kernel's occupancy on a device.
/// Thread-safe; nothing is held after the call.
///
///     launch(stream, {.grid = grid_for(n, 256), .block = 256}, kernel, data, n);
///     launch(stream, occupancy_config(kernel, device, {.elements = n}), kernel, data, n);
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch_config.hpp"

#include <cstddef>
#include <cstdint>

namespace cudacore {

/// ceil(elements / block_threads) blocks in x; InvalidArgumentError for 0 threads or 2^31 blocks.
Dim3 grid_for(std::uint64_t elements, unsigned block_threads);
/// The same in each dimension; InvalidArgumentError for a zero block or over the driver's limits.
Dim3 grid_for(const Dim3& elements, const Dim3& block);

/// What occupancy_config sizes the launch for.
struct OccupancyConfigOptions {
    /// Elements to cover, one thread each; 0: a grid that fills the device (grid-stride loops).
    std::uint64_t elements = 0;
    std::size_t shared_memory_bytes = 0;  ///< dynamic shared memory per block, in bytes
    /// The largest block to consider, in threads; 0: the kernel's own limit.
    int block_size_limit = 0;
};

/// A config for `kernel` on `device`: the block size that maximises occupancy and the grid
/// `options` asks for. DriverError naming the kernel and device; InvalidArgumentError as grid_for.
LaunchConfig occupancy_config(const Kernel& kernel, const Device& device = Device::current(),
                              const OccupancyConfigOptions& options = {});

}  // namespace cudacore
