/// @file
/// VirtualAddressRange: reserved device virtual addresses, backed once physical allocations
/// (possibly of several devices) are mapped there.
///
///     VirtualAddressRange range = VirtualAddressRange::reserve(Device(0), devices * stripe);
///     for (std::size_t d = 0; d < devices; ++d)
///         mappings.push_back(VirtualMemoryMapping::map(range, d * stripe, stripes[d],
///                                                      {.access = everyone}));
#pragma once

#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore {

/// How cuMemAddressReserve places the range.
struct VirtualAddressRangeOptions {
    /// Alignment of the start address: 0 for the granularity, else a power of two.
    std::size_t alignment = 0;
    /// The address asked for (0: anywhere); a hint.
    CUdeviceptr fixed_address = 0;
};

/// A reserved range of device virtual addresses. Copies share it; freed when the last copy and
/// mapping go; holds the primary context it was reserved through. Queries never throw (0 when
/// closed or empty) and are thread-safe; close() must not race other calls.
class VirtualAddressRange
    : public OwningHandle<VirtualAddressRange, detail::VirtualAddressRangeBox, CUdeviceptr> {
public:
    /// Reserves `size` bytes through `device`. InvalidArgumentError, DriverError.
    static VirtualAddressRange reserve(const Device& device, std::size_t size,
                                       const VirtualAddressRangeOptions& options = {});
    /// As reserve() on the current context's device; InvalidArgumentError when none is current.
    static VirtualAddressRange reserve(std::size_t size,
                                       const VirtualAddressRangeOptions& options = {});

    /// The first address (handle()).
    CUdeviceptr address() const noexcept { return handle(); }
    /// Bytes reserved.
    std::size_t size() const noexcept;
    /// "address range of 8388608 bytes at 0x7f...", for messages.
    std::string description() const;

    /// Ends the range for every copy. DriverError (closed all the same).
    void close();
};

}  // namespace cudacore
