/// @file
/// A device's primary context managed as a whole: whether it is active, its flags read and set
/// (cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxSetFlags), and a reset
/// (cuDevicePrimaryCtxReset) that cudacore refuses while its own objects live in the context.
///
///     Device gpu(0);
///     set_primary_context_options(gpu, {.scheduling = ContextScheduling::blocking_sync});
///     PrimaryContextState state = primary_context_state(gpu);   // state.active, state.options
///     reset_primary_context(gpu);   // refused, naming what holds it, while objects of it live
///
/// The primary context is what Device::context() gives and what every call that takes a Device
/// uses. cudacore retains it on first use and keeps it until the process exits (context.hpp), so
/// it is active from then on. Flags may be set before and after it is active (the driver applies
/// them to the active context since CUDA 11).
///
/// Thread safety: every call may be made from any thread. A reset must not race with other
/// threads making objects on the device (as the driver requires of cuDevicePrimaryCtxReset).
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

/// Resets `device`'s primary context (cuDevicePrimaryCtxReset): every allocation, stream, event,
/// module and pool in it is destroyed, and its flags go back to the driver's defaults (set them
/// after the reset, before the next use, which retains a fresh context with them). Refused with InvalidArgumentError while cudacore objects hold the context: Context
/// values of it, its streams and events (and buffers allocated on them), memory resources and
/// pools made for the device, arrays, textures, graphs, loaded code bound to it, contexts created
/// on the device (each holds the primary context), peer access enabled through
/// Device::enable_peer_access. The message counts them and names the kinds it can tell: drop
/// those objects first. The device's default memory resource (Device::memory_resource) does not
/// count while nothing else holds it; it follows the new context. DriverError when the driver
/// refuses. Not to be raced with other threads using the device.
void reset_primary_context(const Device& device);

}  // namespace cudacore
