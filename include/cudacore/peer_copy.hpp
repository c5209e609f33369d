/// @file
/// Copies between buffers of different devices on a stream (cuMemcpyPeerAsync): direct over the
/// peer link when peer access is enabled, else staged through the host by the driver; other
/// pairs are a plain cuMemcpyAsync. Pool memory needs the pool's own access
/// (DeviceMemoryResource::set_peer_accessible_by) for the direct path.
///
///     Device(0).enable_peer_access(Device(1));              // optional: the direct path
///     CopyPath path = copy_between_devices(on_gpu1, on_gpu0, stream);
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
