/// @file
/// VirtualMemoryMapping: a PhysicalAllocation mapped at an offset of a VirtualAddressRange
/// (cuMemMap) with the devices that may use it (cuMemSetAccess); unmapped when closed or its last
/// copy goes, without waiting for the GPU (synchronize first). Holds its range and allocation.
/// Queries are thread-safe; set_access and close() must not race other calls.
///
///     VirtualMemoryMapping mapping = VirtualMemoryMapping::map(
///         range, 0, memory, {.access = {{.device = 0}, {.device = 1}}});
///     launch(stream, config, kernel, mapping.address(), n);
///     mapping.set_access({{.device = 1, .access = MemoryAccess::read}});
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/owning_handle.hpp"
#include "cudacore/physical_allocation.hpp"
#include "cudacore/virtual_address_range.hpp"

#include <cuda.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace cudacore {

/// What VirtualMemoryMapping::map maps and who may use it.
struct VirtualMemoryMapOptions {
    /// Where in the allocation the mapped part starts (a multiple of its granularity). The CUDA 13
    /// driver maps allocations from their start only: any other offset is its DriverError
    /// (CUDA_ERROR_NOT_SUPPORTED, "Specifying an offset is not supported").
    std::size_t allocation_offset = 0;
    /// Bytes mapped (a multiple of the granularity); 0: the allocation from allocation_offset to
    /// its end.
    std::size_t size = 0;
    /// Devices given access at once (cuMemSetAccess); empty: read_write for the allocation's
    /// own device. Other devices need peer access to the allocation's device.
    std::vector<PeerMemoryAccess> access{};
};

/// Physical memory mapped into a reserved address range.
class VirtualMemoryMapping
    : public OwningHandle<VirtualMemoryMapping, detail::VirtualMemoryMappingBox, CUdeviceptr> {
public:
    /// Maps `allocation` (options.size bytes from options.allocation_offset) at `offset` in `range`
    /// with options.access. Throws InvalidArgumentError, first, for closed objects, misaligned or
    /// out-of-range offsets and sizes, or a bad access list; DriverError when the driver refuses
    /// (nothing left mapped). Thread-safe.
    static VirtualMemoryMapping map(const VirtualAddressRange& range, std::size_t offset,
                                    const PhysicalAllocation& allocation,
                                    const VirtualMemoryMapOptions& options = {});

    /// The first mapped address (handle()); 0 when closed or empty. Never throws.
    CUdeviceptr address() const noexcept { return handle(); }
    /// Bytes mapped (0 when closed or empty). Never throws.
    std::size_t size() const noexcept;
    /// Where the mapping starts in its range. Never throws.
    std::size_t offset() const noexcept;
    /// Ordinal of the device whose memory is mapped (-1 when closed or empty). Never throws.
    int device_ordinal() const noexcept;

    /// Sets the access of the listed devices to the whole mapping (cuMemSetAccess); devices not
    /// listed keep theirs. InvalidArgumentError for a closed mapping, an empty list, a device
    /// listed twice or one that does not exist; DriverError naming the call when the driver
    /// refuses (no peer access). Not safe together with other changes to this mapping.
    void set_access(const std::vector<PeerMemoryAccess>& access);
    /// What `device` may do with the mapping (cuMemGetAccess). InvalidArgumentError for a closed
    /// mapping or a device that does not exist, DriverError when the driver refuses.
    MemoryAccess access(int device) const;

    /// A Buffer over the whole mapping that holds it (copies, fills, launches): the mapping stays
    /// while the Buffer or a copy lives. InvalidArgumentError for a closed mapping.
    Buffer as_buffer() const;
    /// "mapping of 2097152 bytes at 0x... (offset 0 of address range ...)": used in messages.
    std::string description() const;

    /// Unmaps it for every copy (now, or when the last Buffer from as_buffer() goes) and lets go
    /// of its range and allocation (docs/errors-and-lifetime.md, "Closing and resetting").
    /// DriverError when the unmap it makes fails (closed all the same).
    void close();
};

/// One Buffer over consecutive mappings of one range (a vector striped over several devices),
/// holding them all. Throws InvalidArgumentError for no mappings, a closed one, or mappings that
/// are not of one range, in address order and without gaps (naming the first that is not).
Buffer as_buffer(std::span<const VirtualMemoryMapping> mappings);

}  // namespace cudacore
