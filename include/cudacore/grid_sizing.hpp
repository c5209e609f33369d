/// @file
/// Grids made for you: from the overall size of the work (one thread per element, the grid
/// rounded up), or from a kernel's occupancy on a device (the block size that maximises it and
/// a grid that fills the device, or covers the work).
///
///     launch(stream, {.grid = grid_for(n, 256), .block = 256}, kernel, data, n);
///     launch(stream, occupancy_config(kernel, device, {.elements = n}), kernel, data, n);
///
/// The kernel's code must still guard against threads past the end (`if (i < n)`): the grid is
/// rounded up to whole blocks. Thread-safe; nothing is held after the call.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch_config.hpp"

#include <cstddef>
#include <cstdint>

namespace cudacore {

/// The blocks of `block_threads` threads that cover `elements` elements, one thread each:
/// ceil(elements / block_threads) in x. InvalidArgumentError when `block_threads` is 0 or the
/// grid would exceed 2^31 - 1 blocks (the driver's largest x), naming both numbers; an
/// `elements` of 0 gives a grid of 0 (launch() refuses it: launch nothing instead).
Dim3 grid_for(std::uint64_t elements, unsigned block_threads);
/// The same in each dimension: ceil(elements.x / block.x) x ... for a 2- or 3-dimensional
/// extent. InvalidArgumentError for a zero block dimension, or a grid over the driver's limits
/// (2^31 - 1 in x, 65535 in y and z), naming the dimension.
Dim3 grid_for(const Dim3& elements, const Dim3& block);

/// What occupancy_config sizes the launch for.
struct OccupancyConfigOptions {
    /// Elements to cover, one thread each: grid = ceil(elements / block). 0: a grid that fills
    /// the device at full occupancy (for kernels that loop over their work: grid-stride loops).
    std::uint64_t elements = 0;
    /// Dynamic shared memory per block, in bytes (also the config's shared_memory_bytes).
    std::size_t shared_memory_bytes = 0;
    /// The largest block to consider, in threads; 0: the kernel's own limit.
    int block_size_limit = 0;
};

/// A config for `kernel` on `device`: the block size that maximises occupancy
/// (cuOccupancyMaxPotentialBlockSize, through Kernel::occupancy) and the grid `options` asks
/// for. Throws DriverError naming the occupancy call, the kernel and the device when it fails;
/// InvalidArgumentError as grid_for when the elements need too many blocks.
LaunchConfig occupancy_config(const Kernel& kernel, const Device& device = Device::current(),
                              const OccupancyConfigOptions& options = {});

}  // namespace cudacore
