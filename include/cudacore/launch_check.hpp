/// @file
/// Checking a launch before making it: whether a LaunchConfig fits a kernel on a device, and why
/// not.
///
///     if (auto reason = launch_problem(config, kernel, device)) std::puts(reason->c_str());
///     check_launch(config, kernel, device);  // throws InvalidArgumentError with the reason
///
/// What is checked: everything launch() checks (no zero dimension, a block within the kernel's
/// limit of threads, dynamic shared memory within the kernel's limit, clusters and cooperative
/// launches only where the device has them, the launch attributes; launch_config.hpp), and
/// what launch() leaves to the driver: each block dimension against the device's
/// (MAX_BLOCK_DIM_X/Y/Z), the blocks launched against the device's grid dimensions
/// (MAX_GRID_DIM_X/Y/Z), the kernel's static plus dynamic shared memory against the device's
/// opt-in limit per block, a cluster against the kernel's required cluster shape, the portable
/// limit of 8 blocks (unless the kernel allows non-portable sizes) and the largest cluster the
/// kernel can run with this config (cuOccupancyMaxPotentialClusterSize), and a cooperative grid
/// against the blocks that can be resident at once. Thread-safe; holds nothing after the call.
#pragma once

#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch_config.hpp"

#include <optional>
#include <string>

namespace cudacore {

/// Why `config` cannot launch `kernel` on `device`: the message check_launch would throw
/// ("launch of kernel 'k' (...) on device 0 (grid ..., block ...): the block has 2048 threads,
/// over the kernel's limit of 1024"), or nullopt when it fits. Throws DriverError when a query
/// it needs fails (naming the call, the kernel and the device), InvalidArgumentError for an
/// empty (moved-from) Kernel.
std::optional<std::string> launch_problem(const LaunchConfig& config, const Kernel& kernel,
                                          const Device& device = Device::current());

/// launch_problem's check, throwing InvalidArgumentError with the reason when `config` does not
/// fit; DriverError as launch_problem.
void check_launch(const LaunchConfig& config, const Kernel& kernel,
                  const Device& device = Device::current());

}  // namespace cudacore
