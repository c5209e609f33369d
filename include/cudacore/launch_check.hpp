/// @file
/// Checking a launch before making it: whether a LaunchConfig fits a kernel on a device, and why
/// not (the limits launch() leaves to the driver too). Thread-safe; holds nothing.
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

/// Why `config` cannot launch `kernel` on `device`, or nullopt. DriverError, InvalidArgumentError.
std::optional<std::string> launch_problem(const LaunchConfig& config, const Kernel& kernel,
                                          const Device& device = Device::current());

/// Throws InvalidArgumentError with launch_problem's reason when `config` does not fit.
void check_launch(const LaunchConfig& config, const Kernel& kernel,
                  const Device& device = Device::current());

}  // namespace cudacore
