/// @file
/// The split between L1 cache and shared memory a context or a kernel prefers: a hint the driver
/// may override for a launch that needs more shared memory. A kernel's preference overrides its
/// context's; it can be set but not read. Thread-safe; nothing is kept alive. Calls throw
/// InvalidArgumentError for a closed or empty object or a value outside the enumeration (before
/// the driver), DriverError naming the object when the driver refuses.
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

/// "none", "prefer_shared", "prefer_l1", "equal"; "CachePreference(N)" for other values.
std::string to_string(CachePreference preference);

/// The driver's CUfunc_cache for `preference` (InvalidArgumentError naming `call`). No driver.
CUfunc_cache driver_cache_config(CachePreference preference, const char* call = "driver_cache_config");

CachePreference cache_preference(const Context& context);  ///< `context`'s preference
/// Sets `context`'s preference for the kernels launched in it.
void set_cache_preference(const Context& context, CachePreference preference);

/// The preference of `device`'s primary context.
CachePreference cache_preference(const Device& device);
/// Sets the preference of `device`'s primary context.
void set_cache_preference(const Device& device, CachePreference preference);

/// Sets `kernel`'s own preference on `device`, overriding its context's.
void set_cache_preference(const Kernel& kernel, CachePreference preference,
                          const Device& device = Device::current());

}  // namespace cudacore
