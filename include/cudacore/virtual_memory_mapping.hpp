/// @file
/// VirtualMemoryMapping: a PhysicalAllocation mapped at an offset of a VirtualAddressRange, with
/// the devices that may use it.
///
///     VirtualMemoryMapping mapping = VirtualMemoryMapping::map(
///         range, 0, memory, {.access = {{.device = 0}, {.device = 1}}});
///     launch(stream, config, kernel, mapping.address(), n);
///     mapping.set_access({{.device = 1, .access = MemoryAccess::read}});
#pragma once

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
    /// Where in the allocation the mapped part starts (the CUDA 13 driver refuses all but 0).
    std::size_t allocation_offset = 0;
    /// Bytes mapped (a multiple of the granularity); 0: to the allocation's end.
    std::size_t size = 0;
    /// Devices given access at once; empty: read_write for the allocation's own device.
    std::vector<PeerMemoryAccess> access{};
};

/// Physical memory mapped into a reserved address range; holds its range and allocation.
/// Unmapped when closed or its last copy goes, without waiting for the GPU. Queries never throw
/// (0 or -1 when closed or empty) and are thread-safe; set_access and close() must not race
/// other calls. Every other call throws InvalidArgumentError on a closed mapping.
class VirtualMemoryMapping
    : public OwningHandle<VirtualMemoryMapping, detail::VirtualMemoryMappingBox, CUdeviceptr> {
public:
    /// Maps `allocation` at `offset` in `range`. InvalidArgumentError (closed, misaligned, out of
    /// range, bad access), DriverError (nothing left mapped). Thread-safe.
    static VirtualMemoryMapping map(const VirtualAddressRange& range, std::size_t offset,
                                    const PhysicalAllocation& allocation,
                                    const VirtualMemoryMapOptions& options = {});

    /// The first mapped address (handle()).
    CUdeviceptr address() const noexcept { return handle(); }
    /// Bytes mapped.
    std::size_t size() const noexcept;
    /// Where the mapping starts in its range.
    std::size_t offset() const noexcept;
    /// Ordinal of the device whose memory is mapped.
    int device_ordinal() const noexcept;

    /// Sets the listed devices' access. InvalidArgumentError, DriverError.
    void set_access(const std::vector<PeerMemoryAccess>& access);
    /// What `device` may do with the mapping. DriverError when the driver refuses.
    MemoryAccess access(int device) const;

    /// A Buffer over the whole mapping, holding it.
    Buffer as_buffer() const;
    /// "mapping of 2097152 bytes at 0x... (offset 0 of address range ...)", for messages.
    std::string description() const;

    /// Unmaps it for every copy. DriverError (closed all the same).
    void close();
};

/// One Buffer over consecutive mappings of one range, holding them. InvalidArgumentError.
Buffer as_buffer(std::span<const VirtualMemoryMapping> mappings);

}  // namespace cudacore
