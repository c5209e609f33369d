/// @file
/// VirtualAddressRange: a range of device virtual addresses reserved (cuMemAddressReserve), with
/// no memory behind it until physical allocations are mapped there (VirtualMemoryMapping,
/// virtual_memory_mapping.hpp). Addresses are unified: one range may be backed by allocations of
/// several devices (a vector striped over every GPU) and used by each device given access.
///
///     VirtualAddressRange range = VirtualAddressRange::reserve(Device(0), devices * stripe);
///     for (std::size_t d = 0; d < devices; ++d)
///         mappings.push_back(VirtualMemoryMapping::map(range, d * stripe, stripes[d],
///                                                      {.access = everyone}));
///
/// Ownership: copies are cheap and share the range; it is freed (cuMemAddressFree) when the last
/// copy and the last mapping in it are gone, in any order, including at exit (then the driver
/// frees it). close() ends it for every copy; mappings keep it until they go. It holds the
/// primary context of the device it was reserved through (the driver reserves and frees addresses
/// in a context, though the range is every device's). Thread-safe: the queries; close() must not
/// race with other calls on the same object.
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
    /// Reserves `size` bytes of addresses (a multiple of the allocation granularity of the
    /// allocations to be mapped there; the driver refuses other sizes) through `device`'s primary
    /// context, which the range holds (retained, as Device::context() does) until it is freed;
    /// the addresses are usable by every device that a mapping gives access. Throws
    /// InvalidArgumentError for size 0 or an alignment that is not a power of two, DriverError
    /// naming the call and the size when the driver refuses. Thread-safe.
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
