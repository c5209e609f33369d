/// @file
/// Copies between buffers of different devices on a stream: direct when peer access is enabled
/// (for pool memory, the pool's too), else staged through the host by the driver.
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

/// "same_device", "peer" or "staged"; "CopyPath(N)" outside the enumeration.
std::string to_string(CopyPath path);

/// The path copy_between_devices takes for these buffers now; throws as it does.
CopyPath copy_path(const Buffer& destination, const Buffer& source);

/// Copies all of `source` into `destination` on `stream`. InvalidArgumentError, DriverError.
CopyPath copy_between_devices(const Buffer& destination, const Buffer& source,
                              const Stream& stream);

}  // namespace cudacore
