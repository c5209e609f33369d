// Checks of the virtual memory parts' arguments that need no driver (sizes, offsets, alignments,
// access lists), apart so that they are testable without one. Each throws InvalidArgumentError
// naming the call, the value and the rule it breaks.
#pragma once

#include "cudacore/virtual_memory_resource.hpp"  // PeerMemoryAccess

#include <cstddef>
#include <span>
#include <string>

namespace cudacore::detail {

// PhysicalAllocation::create: `size` positive and a multiple of `granularity` (the device's
// minimum for these properties), named as `device`.
void check_physical_size(std::size_t size, std::size_t granularity, const std::string& device);

// VirtualAddressRange::reserve: `size` positive; `alignment` 0 or a power of two.
void check_reserve(std::size_t size, std::size_t alignment);

// What VirtualMemoryMapping::map is asked: `size` bytes (0: the allocation from
// allocation_offset to its end) of an allocation of `allocation_size` bytes from
// `allocation_offset`, at `offset` in a range of `range_size` bytes; offsets and size multiples
// of `granularity`, inside both. Returns the size to map.
struct MappingRequest {
    std::size_t range_size = 0;
    std::size_t offset = 0;
    std::size_t allocation_size = 0;
    std::size_t allocation_offset = 0;
    std::size_t size = 0;
    std::size_t granularity = 0;
};
std::size_t check_mapping(const MappingRequest& request, const std::string& range,
                          const std::string& allocation);

// An access list for cuMemSetAccess: not empty, devices in [0, device_count), none twice, a
// MemoryAccess value. `call` names the caller.
void check_access_list(std::span<const PeerMemoryAccess> access, int device_count,
                       const char* call);

}  // namespace cudacore::detail
