/// @file
/// Which streams may reach managed memory (cuStreamAttachMemAsync), and how a managed allocation
/// starts out (ManagedMemoryResourceOptions::attach, CU_MEM_ATTACH_GLOBAL / CU_MEM_ATTACH_HOST).
///
/// On devices without concurrent managed access (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS 0)
/// the host may touch managed memory only while no kernel that can reach it runs: attaching an
/// allocation to one stream (single) lets the host use it while kernels run on other streams,
/// and host attachment keeps every kernel away from it. On devices with concurrent access
/// (the H100) the attachment is kept but changes nothing for correctness.
#pragma once

#include <cuda.h>

#include <string>

namespace cudacore {

class Buffer;
class Stream;

/// An attachment of managed memory (CU_MEM_ATTACH_*).
enum class ManagedAttach {
    global,  ///< CU_MEM_ATTACH_GLOBAL: any stream on any device (the default at allocation)
    host,    ///< CU_MEM_ATTACH_HOST: the host only, until attached to a stream or globally
    single,  ///< CU_MEM_ATTACH_SINGLE: the stream given to attach() only, on its device
};

/// "global", "host" or "single"; "ManagedAttach(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(ManagedAttach attach);

/// Attaches `buffer`'s whole managed allocation as `attach` says, on `stream`
/// (cuStreamAttachMemAsync). Throws InvalidArgumentError for a closed buffer or stream, memory
/// that is not managed, or single on the legacy stream; DriverError when the driver refuses.
/// Keeps nothing alive; thread-safe.
void attach(const Buffer& buffer, ManagedAttach attach, const Stream& stream);

}  // namespace cudacore
