/// @file
/// Copies between buffers of different devices, ordered on a stream.
///
///     Device(0).enable_peer_access(Device(1));              // optional: the direct path
///     CopyPath path = copy_between_devices(on_gpu1, on_gpu0, stream);
///
/// Device memory of two devices is copied with cuMemcpyPeerAsync between their primary contexts:
/// directly over the peer link when peer access is enabled between the two devices, otherwise
/// staged through host memory by the driver (slower, but it works on any pair of devices). Any
/// other pair (same device, host or managed memory on either side) is a plain cuMemcpyAsync.
/// Memory from a memory pool is reached through the pool's own access list, not the contexts':
/// for the direct path give the other device access to the pool as well
/// (DeviceMemoryResource::set_peer_accessible_by).
/// Like every stream-ordered copy, work on other streams must wait for `stream` before using
/// the destination.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/stream.hpp"

#include <string>

namespace cudacore {

/// The way copy_between_devices copies.
enum class CopyPath {
    same_device,  ///< one device (or host / managed memory): cuMemcpyAsync
    peer,         ///< two devices with peer access enabled (Device::enable_peer_access)
    staged,       ///< two devices without it: the driver stages through host memory
};

/// "same_device", "peer" or "staged"; "CopyPath(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(CopyPath path);

/// The path copy_between_devices takes for these buffers now. Throws like copy_between_devices.
CopyPath copy_path(const Buffer& destination, const Buffer& source);

/// Copies all of `source` into `destination`, asynchronously on `stream` (of either device, or
/// any other), and returns the path taken. Throws InvalidArgumentError when either buffer is
/// closed or their sizes differ (naming both), DriverError when the driver refuses.
CopyPath copy_between_devices(const Buffer& destination, const Buffer& source,
                              const Stream& stream);

}  // namespace cudacore
