/// @file
/// PhysicalAllocation: device memory made by cuMemCreate, at no address yet: map it into a
/// VirtualAddressRange (VirtualMemoryMapping) to use it, or export it (physical_allocation_ipc.hpp).
/// Sizes are multiples of the allocation granularity. Copies share it; released when the last copy
/// and mapping go; close() ends it for every copy. Holds the primary context. Queries are
/// thread-safe; close() must not race other calls. VirtualMemoryResource does all this for you.
///
///     const AllocationGranularity granularity = allocation_granularity(device);
///     PhysicalAllocation memory = PhysicalAllocation::create(device, 4 * granularity.minimum);
///     VirtualAddressRange range = VirtualAddressRange::reserve(device, memory.size());
///     VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
///     Buffer view = mapping.as_buffer();  // copies, fills, launches
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/owning_handle.hpp"
#include "cudacore/virtual_memory_resource.hpp"  // VirtualMemoryAllocationType, MemoryAccess

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore {

class Device;

/// What cuMemCreate makes: the kind of memory, the handle types it may be exported as, RDMA.
struct PhysicalAllocationOptions {
    /// pinned device memory (the default) or managed memory, as VirtualMemoryResourceOptions.
    VirtualMemoryAllocationType allocation_type = VirtualMemoryAllocationType::pinned;
    /// Handle types it may be exported as (CUmemAllocationHandleType bits:
    /// CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_FABRIC); each must be
    /// supported by the device (InvalidArgumentError naming the device attribute otherwise).
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
    /// Usable by GPUDirect RDMA (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED).
    bool gpu_direct_rdma = false;
};

/// The sizes every size and offset of an allocation with given properties is a multiple of.
struct AllocationGranularity {
    std::size_t minimum = 0;      ///< CU_MEM_ALLOC_GRANULARITY_MINIMUM: required
    std::size_t recommended = 0;  ///< CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: best performance
};

/// cuMemGetAllocationGranularity for allocations of `device` with `options`. Throws
/// InvalidArgumentError when the device has no virtual memory management or refuses an option
/// (naming the attribute), DriverError naming the call otherwise. Thread-safe.
AllocationGranularity allocation_granularity(const Device& device,
                                             const PhysicalAllocationOptions& options = {});

/// How PhysicalAllocation::from_handle takes a handle made elsewhere.
struct PhysicalAllocationFromHandleOptions {
    /// True: released (cuMemRelease) when the last holder goes, as one made by create().
    bool take_ownership = false;
};

/// Physical device memory (CUmemGenericAllocationHandle), mapped through VirtualMemoryMapping.
class PhysicalAllocation
    : public OwningHandle<PhysicalAllocation, detail::PhysicalAllocationBox,
                          CUmemGenericAllocationHandle> {
public:
    /// `size` bytes on `device` (cuMemCreate). Throws InvalidArgumentError for size 0, a size
    /// that is not a multiple of allocation_granularity(device, options).minimum (naming both),
    /// or options the device refuses; DriverError naming the call and the size when the driver
    /// refuses (out of memory). Thread-safe.
    static PhysicalAllocation create(const Device& device, std::size_t size,
                                     const PhysicalAllocationOptions& options = {});
    /// Wraps an allocation handle made elsewhere, of `size` bytes (the driver cannot tell a
    /// handle's size); its device and properties are asked of the driver
    /// (cuMemGetAllocationPropertiesFromHandle). Without take_ownership the handle is never
    /// released by cudacore. InvalidArgumentError for a null handle or size 0; DriverError
    /// naming the call when the driver does not know the handle.
    static PhysicalAllocation from_handle(CUmemGenericAllocationHandle handle, std::size_t size,
                                          const PhysicalAllocationFromHandleOptions& options = {});

    /// Bytes of physical memory. 0 when closed or empty. Never throws.
    std::size_t size() const noexcept;
    /// Ordinal of the device whose memory it is (-1 when closed or empty). Never throws.
    int device_ordinal() const noexcept;
    /// The minimum granularity of its properties: map offsets and sizes are multiples of it (0
    /// when closed or empty). Never throws.
    std::size_t granularity() const noexcept;
    /// The handle types it may be exported as (PhysicalAllocationOptions::handle_types).
    unsigned handle_types() const noexcept;
    /// Managed memory (VirtualMemoryAllocationType::managed).
    bool is_managed() const noexcept;
    /// "physical allocation of 2097152 bytes on device 0": used in messages (what it was, once
    /// closed).
    std::string description() const;

    /// Ends the allocation for every copy; it is released now when no mapping holds it,
    /// otherwise when the last mapping goes (docs/errors-and-lifetime.md, "Closing and
    /// resetting"). DriverError when the release it makes fails (closed all the same).
    void close();
};

}  // namespace cudacore
