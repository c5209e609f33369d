/// @file
/// Stream attributes: synchronization policy, L2 access policy window, priority; a set attribute
/// applies to later work. Every call throws InvalidArgumentError for a closed stream, DriverError
/// naming the call, attribute and stream. Thread-safe; the last set wins.
#pragma once

#include "cudacore/stream.hpp"

#include <cuda.h>

#include <optional>
#include <string>

namespace cudacore {

/// How a host thread waits for the stream's work.
enum class SynchronizationPolicy {
    automatic = CU_SYNC_POLICY_AUTO,           ///< the driver decides (the default)
    spin = CU_SYNC_POLICY_SPIN,                ///< spins: lowest latency, a busy CPU core
    yield = CU_SYNC_POLICY_YIELD,              ///< spins, yielding the core between checks
    blocking_sync = CU_SYNC_POLICY_BLOCKING_SYNC,  ///< sleeps until the work is done
};

/// "automatic", "spin", "yield", "blocking_sync"; "SynchronizationPolicy(N)" outside it.
std::string to_string(SynchronizationPolicy policy);

/// The policy set on the stream, else the one its context's scheduling flag gives.
SynchronizationPolicy synchronization_policy(const Stream& stream);
/// Sets `stream`'s policy (InvalidArgumentError for a value outside the enumeration).
void set_synchronization_policy(const Stream& stream, SynchronizationPolicy policy);
/// The earlier order, the value first.
[[deprecated("use set_synchronization_policy(stream, policy)")]]
inline void set_synchronization_policy(SynchronizationPolicy policy, const Stream& stream) {
    set_synchronization_policy(stream, policy);
}

/// The stream's L2 persistence window, or nullopt when none is set.
std::optional<CUaccessPolicyWindow> access_policy_window(const Stream& stream);
/// Sets `window` on `stream` (memory kept by the caller). InvalidArgumentError for a bad one.
void set_access_policy_window(const Stream& stream, const CUaccessPolicyWindow& window);
/// The earlier order, the window first.
[[deprecated("use set_access_policy_window(stream, window)")]]
inline void set_access_policy_window(const CUaccessPolicyWindow& window, const Stream& stream) {
    set_access_policy_window(stream, window);
}
/// Removes the window: accesses are normal again.
void clear_access_policy_window(const Stream& stream);

/// The stream's priority read as an attribute (lower is higher).
int priority_attribute(const Stream& stream);

/// Copies the driver's attributes of `source` to `destination` (one context).
void copy_attributes(const Stream& destination, const Stream& source);

}  // namespace cudacore
