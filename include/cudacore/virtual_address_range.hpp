/// @file
/// VirtualAddressRange: reserved device virtual addresses (cuMemAddressReserve), backed once
/// physical allocations are mapped there, possibly of several devices. Copies share it; freed when
/// the last copy and mapping go; close() ends it for every copy. Holds the primary context of the
/// device it was reserved through. Queries are thread-safe; close() must not race other calls.
///
///     VirtualAddressRange range = VirtualAddressRange::reserve(Device(0), devices * stripe);
///     for (std::size_t d = 0; d < devices; ++d)
///         mappings.push_back(VirtualMemoryMapping::map(range, d * stripe, stripes[d],
///                                                      {.access = everyone}));
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore {

/// How cuMemAddressReserve places the range.
struct VirtualAddressRangeOptions {
    /// Alignment of the start address: 0 for the driver's default (the allocation granularity),
    /// else a power of two.
    std::size_t alignment = 0;
    /// The address asked for (0: anywhere). A hint: the driver may place the range elsewhere.
    CUdeviceptr fixed_address = 0;
};

/// A reserved range of device virtual addresses.
class VirtualAddressRange
    : public OwningHandle<VirtualAddressRange, detail::VirtualAddressRangeBox, CUdeviceptr> {
public:
    /// Reserves `size` bytes of addresses (a multiple of the granularity) through `device`'s
    /// primary context, which the range holds. Throws InvalidArgumentError for size 0 or a bad
    /// alignment, DriverError naming the call and size. Thread-safe.
    static VirtualAddressRange reserve(const Device& device, std::size_t size,
                                       const VirtualAddressRangeOptions& options = {});
    /// As reserve(device, size, options) with the device of the calling thread's current
    /// context. InvalidArgumentError naming the call when no context is current (rather than
    /// retaining device 0's primary context unasked): name the device then.
    static VirtualAddressRange reserve(std::size_t size,
                                       const VirtualAddressRangeOptions& options = {});

    /// The first address (handle()); 0 when closed or empty. Never throws.
    CUdeviceptr address() const noexcept { return handle(); }
    /// Bytes reserved (0 when closed or empty). Never throws.
    std::size_t size() const noexcept;
    /// "address range of 8388608 bytes at 0x7f...": used in messages (what it was, once closed).
    std::string description() const;

    /// Ends the range for every copy; it is freed now when nothing is mapped in it, otherwise
    /// when the last mapping goes (docs/errors-and-lifetime.md, "Closing and resetting").
    /// DriverError when the release it makes fails (closed all the same).
    void close();
};

}  // namespace cudacore
