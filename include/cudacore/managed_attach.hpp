/// @file
/// Which streams may reach managed memory, and how a managed allocation starts out. It matters
/// on devices without concurrent managed access: docs/memory.md, "Managed memory attached to a
/// stream or to the host".
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

/// "global", "host" or "single"; "ManagedAttach(N)" outside the enumeration.
std::string to_string(ManagedAttach attach);

/// Attaches `buffer`'s managed allocation as `attach` says, on `stream`. InvalidArgumentError,
/// DriverError. Keeps nothing alive; thread-safe.
void attach(const Buffer& buffer, ManagedAttach attach, const Stream& stream);

}  // namespace cudacore
