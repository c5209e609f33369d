/// @file
/// The split between L1 cache and shared memory a context or a kernel prefers
/// (cuCtxSetCacheConfig, cuKernelSetCacheConfig). A hint: the driver may choose otherwise for a
/// launch that needs more shared memory. A kernel's preference overrides its context's; it can be
/// set but not read. Any thread; the context calls make the context current for the call.
///
///     set_cache_preference(Device(0), CachePreference::prefer_shared);    // its primary context
///     set_cache_preference(created, CachePreference::prefer_l1);          // a created context
///     set_cache_preference(kernel, CachePreference::equal, Device(0));    // one kernel, one device
///     CachePreference now = cache_preference(created);                    // prefer_l1
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

#include <string>

namespace cudacore {

class Kernel;

/// The preferred split of L1 cache and shared memory: the CU_FUNC_CACHE_PREFER_* values.
enum class CachePreference {
    none,           ///< CU_FUNC_CACHE_PREFER_NONE: no preference (the default)
    prefer_shared,  ///< CU_FUNC_CACHE_PREFER_SHARED: more shared memory, less L1
    prefer_l1,      ///< CU_FUNC_CACHE_PREFER_L1: more L1, less shared memory
    equal,          ///< CU_FUNC_CACHE_PREFER_EQUAL: as much L1 as shared memory
};

/// "none", "prefer_shared", "prefer_l1", "equal"; "CachePreference(N)" outside the enumeration.
/// Never throws beyond std::bad_alloc.
std::string to_string(CachePreference preference);

/// The driver's CUfunc_cache for `preference`. InvalidArgumentError naming `call` for a value
/// outside the enumeration. Pure: no driver, thread-safe.
CUfunc_cache driver_cache_config(CachePreference preference, const char* call = "driver_cache_config");

/// `context`'s preference (cuCtxGetCacheConfig). InvalidArgumentError for a closed or empty
/// Context, DriverError when the driver refuses. Keeps nothing alive.
CachePreference cache_preference(const Context& context);
/// Sets `context`'s preference (cuCtxSetCacheConfig) for the kernels launched in it.
/// InvalidArgumentError for a closed or empty Context or a value outside the enumeration (before
/// the driver), DriverError when the driver refuses. Keeps nothing alive.
void set_cache_preference(const Context& context, CachePreference preference);

/// The preference of `device`'s primary context (cache_preference(device.context())).
CachePreference cache_preference(const Device& device);
/// Sets the preference of `device`'s primary context.
void set_cache_preference(const Device& device, CachePreference preference);

/// Sets `kernel`'s own preference on `device` (cuKernelSetCacheConfig), which overrides its
/// context's for this kernel. InvalidArgumentError for an empty Kernel or a value outside the
/// enumeration (before the driver), DriverError naming the kernel and the device when the driver
/// refuses. Keeps nothing alive.
void set_cache_preference(const Kernel& kernel, CachePreference preference,
                          const Device& device = Device::current());

}  // namespace cudacore
