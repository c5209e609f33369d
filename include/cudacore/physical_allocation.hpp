/// @file
/// PhysicalAllocation: device memory at no address yet, mapped by VirtualMemoryMapping or
/// exported (physical_allocation_ipc.hpp). VirtualMemoryResource does all this for you.
///
///     const AllocationGranularity granularity = allocation_granularity(device);
///     PhysicalAllocation memory = PhysicalAllocation::create(device, 4 * granularity.minimum);
///     VirtualAddressRange range = VirtualAddressRange::reserve(device, memory.size());
///     VirtualMemoryMapping mapping = VirtualMemoryMapping::map(range, 0, memory);
///     Buffer view = mapping.as_buffer();  // copies, fills, launches
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/virtual_memory_resource.hpp"  // VirtualMemoryAllocationType, MemoryAccess

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore {

class Device;

/// What cuMemCreate makes: the kind of memory, the handle types it may be exported as, RDMA.
struct PhysicalAllocationOptions {
    /// Pinned device memory (the default) or managed memory.
    VirtualMemoryAllocationType allocation_type = VirtualMemoryAllocationType::pinned;
    /// Handle types it may be exported as, each supported by the device.
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
    /// Usable by GPUDirect RDMA.
    bool gpu_direct_rdma = false;
};

/// The sizes every size and offset of an allocation with given properties is a multiple of.
struct AllocationGranularity {
    std::size_t minimum = 0;      ///< CU_MEM_ALLOC_GRANULARITY_MINIMUM: required
    std::size_t recommended = 0;  ///< CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: best performance
};

/// The granularity of `device`'s allocations. InvalidArgumentError, DriverError. Thread-safe.
AllocationGranularity allocation_granularity(const Device& device,
                                             const PhysicalAllocationOptions& options = {});

/// How PhysicalAllocation::from_handle takes a handle made elsewhere.
struct PhysicalAllocationFromHandleOptions {
    /// Release the handle when the last holder goes; false: cudacore never releases it.
    bool take_ownership = false;
};

/// Physical device memory, sizes multiples of the granularity; released when the last copy and
/// mapping go; holds the primary context. Queries never throw (0 or -1 when closed or empty) and
/// are thread-safe; close() must not race other calls.
class PhysicalAllocation
    : public OwningHandle<PhysicalAllocation, detail::PhysicalAllocationBox,
                          CUmemGenericAllocationHandle> {
public:
    /// `size` bytes on `device`. InvalidArgumentError (size), DriverError (out of memory).
    static PhysicalAllocation create(const Device& device, std::size_t size,
                                     const PhysicalAllocationOptions& options = {});
    /// Wraps a handle made elsewhere, of `size` bytes. InvalidArgumentError, DriverError.
    static PhysicalAllocation from_handle(CUmemGenericAllocationHandle handle, std::size_t size,
                                          const PhysicalAllocationFromHandleOptions& options = {});

    /// Bytes of physical memory.
    std::size_t size() const noexcept;
    /// Ordinal of the device whose memory it is.
    int device_ordinal() const noexcept;
    /// The minimum granularity: map offsets and sizes are multiples of it.
    std::size_t granularity() const noexcept;
    /// The handle types it may be exported as.
    unsigned handle_types() const noexcept;
    /// Managed memory.
    bool is_managed() const noexcept;
    /// "physical allocation of 2097152 bytes on device 0", for messages.
    std::string description() const;

    /// Ends it for every copy (released once unmapped). DriverError (closed all the same).
    void close();
};

}  // namespace cudacore
