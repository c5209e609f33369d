/// @file
/// Checking a launch before making it: whether a LaunchConfig fits a kernel on a device, and why
/// not; what launch() checks, plus what it leaves to the driver (device block and grid limits,
/// shared memory, cluster shape and size, cooperative residency). Thread-safe; holds nothing.
///
///     if (auto reason = launch_problem(config, kernel, device)) std::puts(reason->c_str());
///     check_launch(config, kernel, device);  // throws InvalidArgumentError with the reason
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
