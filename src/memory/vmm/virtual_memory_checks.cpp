#include "memory/vmm/virtual_memory_checks.hpp"

#include "cudacore/errors.hpp"

#include <set>

namespace cudacore::detail {

namespace {

std::string bytes(std::size_t size) { return std::to_string(size) + " bytes"; }

bool is_power_of_two(std::size_t value) { return value && !(value & (value - 1)); }

}  // namespace

void check_physical_size(std::size_t size, std::size_t granularity, const std::string& device) {
    if (size == 0)
        throw InvalidArgumentError("PhysicalAllocation::create: size 0 on " + device);
    if (granularity && size % granularity != 0)
        throw InvalidArgumentError("PhysicalAllocation::create: " + bytes(size) + " on " + device +
                                   " is not a multiple of the allocation granularity, " +
                                   bytes(granularity) + " (allocation_granularity)");
}

void check_reserve(std::size_t size, std::size_t alignment) {
    if (size == 0) throw InvalidArgumentError("VirtualAddressRange::reserve: size 0");
    if (alignment && !is_power_of_two(alignment))
        throw InvalidArgumentError("VirtualAddressRange::reserve: alignment " +
                                   std::to_string(alignment) + " for " + bytes(size) +
                                   " is not a power of two");
}

std::size_t check_mapping(const MappingRequest& r, const std::string& range,
                          const std::string& allocation) {
    const std::string call = "VirtualMemoryMapping::map: ";
    const std::string granularity = " is not a multiple of the allocation granularity, " +
                                    bytes(r.granularity) + " (of " + allocation + ")";
    if (r.granularity && r.offset % r.granularity != 0)
        throw InvalidArgumentError(call + "offset " + std::to_string(r.offset) + " in " + range +
                                   granularity);
    if (r.granularity && r.allocation_offset % r.granularity != 0)
        throw InvalidArgumentError(call + "allocation_offset " +
                                   std::to_string(r.allocation_offset) + granularity);
    if (r.allocation_offset >= r.allocation_size)
        throw InvalidArgumentError(call + "allocation_offset " +
                                   std::to_string(r.allocation_offset) + " is not inside " +
                                   allocation);
    const std::size_t size = r.size ? r.size : r.allocation_size - r.allocation_offset;
    if (r.granularity && size % r.granularity != 0)
        throw InvalidArgumentError(call + "size " + bytes(size) + granularity);
    if (size > r.allocation_size - r.allocation_offset)
        throw InvalidArgumentError(call + bytes(size) + " from allocation_offset " +
                                   std::to_string(r.allocation_offset) + " go beyond the end of " +
                                   allocation);
    if (r.offset >= r.range_size || size > r.range_size - r.offset)
        throw InvalidArgumentError(call + bytes(size) + " at offset " + std::to_string(r.offset) +
                                   " go beyond the end of " + range);
    return size;
}

void check_access_list(std::span<const PeerMemoryAccess> access, int device_count,
                       const char* call) {
    if (access.empty())
        throw InvalidArgumentError(std::string(call) + ": an empty access list (name at least one device)");
    std::set<int> seen;
    for (const PeerMemoryAccess& entry : access) {
        if (entry.device < 0 || entry.device >= device_count)
            throw InvalidArgumentError(std::string(call) + ": device " +
                                       std::to_string(entry.device) + " does not exist (" +
                                       std::to_string(device_count) + " devices)");
        if (!seen.insert(entry.device).second)
            throw InvalidArgumentError(std::string(call) + ": device " +
                                       std::to_string(entry.device) + " is listed twice");
        const int value = static_cast<int>(entry.access);
        if (value < 0 || value > 2)
            throw InvalidArgumentError(std::string(call) + ": access " + std::to_string(value) +
                                       " for device " + std::to_string(entry.device) +
                                       " is not a MemoryAccess (none, read, read_write)");
    }
}

}  // namespace cudacore::detail
