/// @file
/// Stream attributes (cuStreamGetAttribute / SetAttribute / CopyAttributes): synchronization
/// policy, L2 access policy window, priority. A set attribute applies to later work; a launch's
/// own attributes take precedence. Throws InvalidArgumentError for a closed stream, DriverError
/// naming the call, attribute and stream. Safe from several threads; the last set wins.
#pragma once

#include "cudacore/stream.hpp"

#include <cuda.h>

#include <optional>
#include <string>

namespace cudacore {

/// How a host thread waits for the stream's work (cuStreamSynchronize, Event::sync on its events).
enum class SynchronizationPolicy {
    automatic = CU_SYNC_POLICY_AUTO,           ///< the driver decides (the default)
    spin = CU_SYNC_POLICY_SPIN,                ///< spins: lowest latency, a busy CPU core
    yield = CU_SYNC_POLICY_YIELD,              ///< spins, yielding the core between checks
    blocking_sync = CU_SYNC_POLICY_BLOCKING_SYNC,  ///< sleeps until the work is done
};

/// "automatic", "spin", "yield" or "blocking_sync"; "SynchronizationPolicy(N)" for a value
/// outside the enumeration. Never throws beyond std::bad_alloc.
std::string to_string(SynchronizationPolicy policy);

/// The policy a host thread waits for the stream under: the one set on it, else the one its
/// context's scheduling flag gives. Throws as this file says, and DriverError when the context's
/// flags cannot be read.
SynchronizationPolicy synchronization_policy(const Stream& stream);
/// Sets `stream`'s policy to `policy` (the stream first, as every setter takes the object it sets:
/// docs/api-conventions.md). InvalidArgumentError for a value that is not one of the enumerators
/// (before the driver), else throws as this file says.
void set_synchronization_policy(const Stream& stream, SynchronizationPolicy policy);
/// The earlier order, the value first.
[[deprecated("use set_synchronization_policy(stream, policy)")]]
inline void set_synchronization_policy(SynchronizationPolicy policy, const Stream& stream) {
    set_synchronization_policy(stream, policy);
}

/// The stream's L2 persistence window (CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW), or nullopt
/// when none is set (a window of 0 bytes). Throws as this file says.
std::optional<CUaccessPolicyWindow> access_policy_window(const Stream& stream);
/// Sets `window` on `stream` (L2 persistence for kernels on it). Throws InvalidArgumentError,
/// before the driver, for a device without a persisting L2, an empty or too large window or a
/// hitRatio outside [0, 1]. The memory is the caller's to keep valid.
void set_access_policy_window(const Stream& stream, const CUaccessPolicyWindow& window);
/// The earlier order, the window first.
[[deprecated("use set_access_policy_window(stream, window)")]]
inline void set_access_policy_window(const CUaccessPolicyWindow& window, const Stream& stream) {
    set_access_policy_window(stream, window);
}
/// Removes the window (sets one of 0 bytes): accesses are normal again. Throws as this file says.
void clear_access_policy_window(const Stream& stream);

/// The stream's priority read as an attribute (CU_STREAM_ATTRIBUTE_PRIORITY; lower is higher),
/// which is what Stream::priority() reads through cuStreamGetPriority. Throws as this file says.
int priority_attribute(const Stream& stream);

/// Copies the attributes the driver keeps for `source` (its synchronization policy and access
/// policy window among them; cuStreamCopyAttributes) to `destination`: later work on
/// `destination` gets them as work on `source` does. Both streams must belong to one context:
/// InvalidArgumentError naming both otherwise (and when either is closed or moved from), before
/// the driver; DriverError when the driver refuses. Nothing is held beyond the call.
void copy_attributes(const Stream& destination, const Stream& source);

}  // namespace cudacore
