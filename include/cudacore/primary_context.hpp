/// @file
/// A device's primary context as a whole: its state and flags, and a reset cudacore refuses
/// while its own objects live in it. Any thread; a reset must not race others using the device.
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

/// The state of `device`'s primary context (not retained). DriverError, NoDriverError.
PrimaryContextState primary_context_state(const Device& device);

/// The primary context flags of `options` (InvalidArgumentError naming `call`). No driver.
unsigned primary_context_flags(const ContextOptions& options,
                               const char* call = "primary_context_flags");

/// Sets `device`'s primary context flags. InvalidArgumentError, DriverError.
void set_primary_context_options(const Device& device, const ContextOptions& options);

/// Resets `device`'s primary context; InvalidArgumentError while cudacore objects hold it.
void reset_primary_context(const Device& device);

}  // namespace cudacore
