/// @file
/// MemoryAccess: how a device may reach memory it does not own, for pool and virtual memory.
#pragma once

#include <string>

namespace cudacore {

/// A device's access to memory (CUmemAccess_flags).
enum class MemoryAccess {
    none,        ///< CU_MEM_ACCESS_FLAGS_PROT_NONE: not at all
    read,        ///< CU_MEM_ACCESS_FLAGS_PROT_READ: read, not write (driver 580 refuses it for pools)
    read_write,  ///< CU_MEM_ACCESS_FLAGS_PROT_READWRITE
};

/// "none", "read", "read_write"; "MemoryAccess(N)" outside the enumeration.
std::string to_string(MemoryAccess access);

}  // namespace cudacore
