// What launch() checks, for the calls that check a launch before making it (launch_check.hpp)
// and for the tests of its messages. Defined in src/runtime/launch.cpp.
#pragma once

#include "cudacore/kernel.hpp"
#include "cudacore/launch_config.hpp"
#include "runtime/kernel_box.hpp"
#include "runtime/runtime_handles.hpp"

#include <cstddef>
#include <string>

namespace cudacore::detail {

// Every check launch() makes of `config` for `kernel` in `context` (the cluster, cooperative and
// launch attribute checks included): InvalidArgumentError naming the kernel, the device, the
// config and the reason; DriverError when a query it needs fails.
void check_launch_config(const KernelBox& kernel, const LaunchConfig& config,
                         const ContextBox& context);

// Why argument `index` of `count` (`argument_bytes` bytes) does not fit `parameter`:
// "argument 2 is 4 bytes, but parameter 2 (the 3rd of 4, at offset 16) is 8 bytes; ...".
std::string argument_size_problem(std::size_t index, std::size_t count,
                                  std::size_t argument_bytes, const KernelParameter& parameter);

}  // namespace cudacore::detail
