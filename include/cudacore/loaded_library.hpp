/// @file
/// What a loaded ObjectCode holds, as the driver lists it (so also for PTX, fatbins and
/// from_handle libraries): its kernels, and the device and context it was loaded into.
///
///     for (const Kernel& kernel : library_kernels(code))
///         std::printf("%s\n", kernel.lowered_name().c_str());
///
/// Each call loads the code first and throws what ObjectCode::load throws. Thread-safe.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace cudacore {

/// How many kernels the loaded library holds.
std::size_t library_kernel_count(const ObjectCode& code);

/// Every kernel of the loaded library (by name expression where known), each holding it.
std::vector<Kernel> library_kernels(const ObjectCode& code);

/// The names in the code (mangled unless extern "C") of the library's kernels.
std::vector<std::string> library_kernel_names(const ObjectCode& code);

/// The context the library was loaded into (a created one is held).
Context library_context(const ObjectCode& code);

/// The device of library_context(code).
Device library_device(const ObjectCode& code);

}  // namespace cudacore
