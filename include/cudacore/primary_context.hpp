/// @file
/// A device's primary context as a whole: its state and flags (cuDevicePrimaryCtxGetState /
/// SetFlags) and a reset cudacore refuses while its own objects live in it. cudacore retains it
/// on first use until exit. Any thread; a reset must not race other threads using the device.
///
///     Device gpu(0);
///     set_primary_context_options(gpu, {.scheduling = ContextScheduling::blocking_sync});
///     PrimaryContextState state = primary_context_state(gpu);   // state.active, state.options
///     reset_primary_context(gpu);   // refused, naming what holds it, while objects of it live
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device.hpp"

namespace cudacore {

/// What cuDevicePrimaryCtxGetState says of a device's primary context.
struct PrimaryContextState {
    bool active = false;         ///< whether the context exists (someone retained it)
    unsigned flags = 0;          ///< its CU_CTX_* flags, as the driver gives them
    ContextOptions options = {}; ///< the flags decoded (bits the options have no field for left out)
};

/// The state of `device`'s primary context (cuDevicePrimaryCtxGetState); it neither retains nor
/// creates the context. DriverError when the driver refuses; NoDriverError without a driver.
PrimaryContextState primary_context_state(const Device& device);

/// The cuDevicePrimaryCtxSetFlags flags of `options`: the scheduling, map_host,
/// lmem_resize_to_max and sync_memops. Throws InvalidArgumentError naming `call` for a
/// scheduling value outside the enumeration and for sm_count (an execution affinity is given
/// only at Context::create). Pure: no driver, thread-safe.
unsigned primary_context_flags(const ContextOptions& options,
                               const char* call = "primary_context_flags");

/// Sets the flags of `device`'s primary context (cuDevicePrimaryCtxSetFlags) to those of
/// `options` (scheduling policy, map host, local memory resize to max, sync memops), active or
/// not. InvalidArgumentError as primary_context_flags (before the driver), DriverError when the
/// driver refuses. Keeps nothing alive.
void set_primary_context_options(const Device& device, const ContextOptions& options);

/// Resets `device`'s primary context (cuDevicePrimaryCtxReset): everything in it is destroyed and
/// its flags return to the defaults. Refused with InvalidArgumentError, counting and naming what
/// holds the context, while cudacore objects do (the default memory resource alone does not).
/// DriverError when the driver refuses. Not to be raced with other threads using the device.
void reset_primary_context(const Device& device);

}  // namespace cudacore
