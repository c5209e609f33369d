/// @file
/// Peer access between contexts of two devices (cuCtxEnablePeerAccess), created ones included:
/// one way; nothing held (destroying either context drops it); enabling twice does nothing. Any
/// thread.
///
///     Context a = Context::create(Device(0)), b = Context::create(Device(1));
///     enable_peer_access(a, b);        // kernels in `a` may read and write memory of `b`
///     bool on = is_peer_access_enabled(a, b);
///     disable_peer_access(a, b);
#pragma once

#include "cudacore/context.hpp"

namespace cudacore {

/// Lets kernels and copies in `context` reach memory of `peer` (cuCtxEnablePeerAccess). Throws
/// InvalidArgumentError for a closed Context or two contexts of one device; DriverError naming
/// both when the driver refuses (PEER_ACCESS_UNSUPPORTED, too many peers). Keeps neither alive.
void enable_peer_access(const Context& context, const Context& peer);

/// Undoes enable_peer_access (cuCtxDisablePeerAccess). Does nothing when access is not enabled or
/// for two contexts of one device; InvalidArgumentError for a closed or empty Context,
/// DriverError for other failures.
void disable_peer_access(const Context& context, const Context& peer);

/// Whether access from `context` to `peer` was enabled through cudacore (either form: this one,
/// or Device::enable_peer_access for two primary contexts) and both contexts are still alive; true
/// for a context and itself. The driver has no query. Never throws beyond std::bad_alloc.
bool is_peer_access_enabled(const Context& context, const Context& peer);

}  // namespace cudacore
