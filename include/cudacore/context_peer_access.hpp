/// @file
/// Peer access between contexts of two devices, created ones included: one way; nothing held;
/// enabling twice does nothing. Thread-safe; DriverError naming both when the driver refuses.
///
///     Context a = Context::create(Device(0)), b = Context::create(Device(1));
///     enable_peer_access(a, b);        // kernels in `a` may read and write memory of `b`
///     bool on = is_peer_access_enabled(a, b);
///     disable_peer_access(a, b);
#pragma once

#include "cudacore/context.hpp"

namespace cudacore {

/// Lets kernels and copies in `context` reach memory of `peer`. InvalidArgumentError for a closed
/// Context or two contexts of one device.
void enable_peer_access(const Context& context, const Context& peer);

/// Undoes enable_peer_access; does nothing when not enabled. InvalidArgumentError when closed.
void disable_peer_access(const Context& context, const Context& peer);

/// Whether access from `context` to `peer` was enabled through cudacore and both are alive (true
/// for a context and itself).
bool is_peer_access_enabled(const Context& context, const Context& peer);

}  // namespace cudacore
