/// @file
/// What a loaded ObjectCode holds: its kernels, listed by the driver (cuLibraryGetKernelCount,
/// cuLibraryEnumerateKernels, cuKernelGetName) rather than read from cubin bytes, so they are
/// known for PTX the driver compiled, a fatbin, and a library handed in with
/// ObjectCode::from_handle; and the device and context it was loaded into.
///
///     for (const Kernel& kernel : library_kernels(code))
///         std::printf("%s\n", kernel.lowered_name().c_str());
///
/// Each call loads the code first when it is not loaded yet (as get_kernel does) and throws
/// what ObjectCode::load throws, InvalidArgumentError on a closed ObjectCode, and DriverError
/// naming the call and the code when a driver query fails. Thread-safe.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/object_code.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace cudacore {

/// How many kernels the loaded library holds (cuLibraryGetKernelCount).
std::size_t library_kernel_count(const ObjectCode& code);

/// Every kernel of the loaded library, in the driver's order. Each is named by its name
/// expression where the code's symbol map has one ("scale<float>"), else by its name in the
/// code; each holds the library loaded, as a Kernel from get_kernel does (a library handed in
/// with from_handle is held as that ObjectCode holds it).
std::vector<Kernel> library_kernels(const ObjectCode& code);

/// The names in the code (mangled for C++ kernels not declared extern "C") of the library's
/// kernels, in the driver's order (cuKernelGetName).
std::vector<std::string> library_kernel_names(const ObjectCode& code);

/// The context the library was loaded into: a created context current at the load (then held),
/// else the primary context of the device current at the load; its globals are that context's.
/// For a library given with from_handle, the current device's primary context.
Context library_context(const ObjectCode& code);

/// The device of library_context(code).
Device library_device(const ObjectCode& code);

}  // namespace cudacore
