// The boxes of the virtual memory parts (physical_allocation.hpp, virtual_address_range.hpp,
// virtual_memory_mapping.hpp): each owns one driver object and holds what its release needs. A
// mapping holds its range and its allocation, so it is unmapped before either is released, in
// whatever order the public objects go. Every release follows reset_tolerance.hpp: nothing is
// released without a driver, at exit once it unloads, or once the context was destroyed under
// us; failures are reported as release warnings, never thrown from a destructor.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

namespace cudacore::detail {

struct PhysicalAllocationBox {
    CUmemGenericAllocationHandle handle = 0;
    std::shared_ptr<ContextBox> context;  // the primary context of its device
    std::size_t size = 0;
    std::size_t granularity = 0;  // minimum granularity of its properties
    int ordinal = 0;
    unsigned handle_types = 0;
    bool managed = false;
    bool owned = true;  // cuMemRelease at the end (false: from_handle without ownership)
    PhysicalAllocationBox() = default;
    PhysicalAllocationBox(const PhysicalAllocationBox&) = delete;
    PhysicalAllocationBox& operator=(const PhysicalAllocationBox&) = delete;
    ~PhysicalAllocationBox();
};

struct VirtualAddressRangeBox {
    CUdeviceptr handle = 0;
    std::size_t size = 0;
    std::shared_ptr<ContextBox> context;  // current when it was reserved (a primary context)
    VirtualAddressRangeBox() = default;
    VirtualAddressRangeBox(const VirtualAddressRangeBox&) = delete;
    VirtualAddressRangeBox& operator=(const VirtualAddressRangeBox&) = delete;
    ~VirtualAddressRangeBox();
};

struct VirtualMemoryMappingBox {
    CUdeviceptr handle = 0;  // the mapped address
    std::size_t size = 0;
    std::size_t offset = 0;             // in the range
    std::size_t allocation_offset = 0;  // in the allocation
    std::shared_ptr<VirtualAddressRangeBox> range;
    std::shared_ptr<PhysicalAllocationBox> allocation;
    VirtualMemoryMappingBox() = default;
    VirtualMemoryMappingBox(const VirtualMemoryMappingBox&) = delete;
    VirtualMemoryMappingBox& operator=(const VirtualMemoryMappingBox&) = delete;
    ~VirtualMemoryMappingBox();
};

// "physical allocation of N bytes on device D", "address range of N bytes at 0x...",
// "mapping of N bytes at 0x... (offset O of address range ...)": for messages.
std::string describe_physical_allocation(const PhysicalAllocationBox& box);
std::string describe_address_range(CUdeviceptr address, std::size_t size);
std::string describe_mapping(const VirtualMemoryMappingBox& box);

// The box of an allocation handle made elsewhere (imported, or a caller's): its properties and
// granularity asked of the driver (cuMemGetAllocationPropertiesFromHandle); `owned` releases it
// at the end. DriverError naming the call when the driver refuses the handle.
std::shared_ptr<PhysicalAllocationBox> adopt_physical_allocation(CUmemGenericAllocationHandle handle,
                                                                 std::size_t size, bool owned);

}  // namespace cudacore::detail
