/// @file
/// MemoryAccess: how a device may reach memory it does not own (CUmemAccess_flags), for the
/// memory of a pool (DeviceMemoryResource::set_access, access_of) and for mapped virtual memory
/// (VirtualMemoryMapping, VirtualMemoryResource) alike.
#pragma once

#include <string>

namespace cudacore {

/// A device's access to memory (CU_MEM_ACCESS_FLAGS_PROT_NONE, _PROT_READ, _PROT_READWRITE).
enum class MemoryAccess {
    none,        ///< CU_MEM_ACCESS_FLAGS_PROT_NONE: not at all
    read,        ///< CU_MEM_ACCESS_FLAGS_PROT_READ: read, not write (driver 580 refuses it for pools)
    read_write,  ///< CU_MEM_ACCESS_FLAGS_PROT_READWRITE
};

/// "none", "read", "read_write"; "MemoryAccess(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(MemoryAccess access);

/// "none", "read", "read_write"; "MemoryAccess(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(MemoryAccess access);

}  // namespace cudacore
