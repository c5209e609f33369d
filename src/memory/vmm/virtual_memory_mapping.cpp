// VirtualMemoryMapping: an allocation mapped into a range, holding both; Buffers over mappings.
#include "cudacore/virtual_memory_mapping.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "memory/vmm/virtual_memory_boxes.hpp"
#include "memory/vmm/virtual_memory_checks.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"

#include <cstdio>

namespace cudacore {

namespace detail {

VirtualMemoryMappingBox::~VirtualMemoryMappingBox() {
    if (!handle || !range || !range->context) return;
    const DriverApi* api = driver_for_release(*range->context);
    if (!api) return;
    check_release(api->cuMemUnmap(handle, size), "cuMemUnmap", [&] { return describe_mapping(*this); });
}

std::string describe_mapping(const VirtualMemoryMappingBox& box) {
    char text[64];
    std::snprintf(text, sizeof text, "mapping of %zu bytes at 0x%llx", box.size,
                  static_cast<unsigned long long>(box.handle));
    return std::string(text) + " (offset " + std::to_string(box.offset) + " of " +
           (box.range ? describe_address_range(box.range->handle, box.range->size) : "a range") +
           ", " + (box.allocation ? describe_physical_allocation(*box.allocation) : "an allocation") + ")";
}

namespace {

CUmemAccess_flags flags_of(MemoryAccess access) {
    switch (access) {
        case MemoryAccess::none: return CU_MEM_ACCESS_FLAGS_PROT_NONE;
        case MemoryAccess::read: return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case MemoryAccess::read_write: return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
    return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

void set_access_of(const VirtualMemoryMappingBox& box, const std::vector<PeerMemoryAccess>& access,
                   const char* call) {
    check_access_list(access, system::device_count(), call);
    std::vector<CUmemAccessDesc> descriptions;
    for (const PeerMemoryAccess& entry : access) {
        CUmemAccessDesc description{};
        description.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        description.location.id = entry.device;
        description.flags = flags_of(entry.access);
        descriptions.push_back(description);
    }
    check(driver().cuMemSetAccess(box.handle, box.size, descriptions.data(), descriptions.size()),
          "cuMemSetAccess", [&] { return describe_mapping(box); });
}

}  // namespace

}  // namespace detail

VirtualMemoryMapping VirtualMemoryMapping::map(const VirtualAddressRange& range, std::size_t offset,
                                               const PhysicalAllocation& allocation,
                                               const VirtualMemoryMapOptions& options) {
    const auto& range_box = detail::open_box_of(range, "VirtualMemoryMapping::map");
    const auto& allocation_box = detail::open_box_of(allocation, "VirtualMemoryMapping::map");
    const std::size_t size = detail::check_mapping(
        {.range_size = range_box->size, .offset = offset, .allocation_size = allocation_box->size,
         .allocation_offset = options.allocation_offset, .size = options.size,
         .granularity = allocation_box->granularity},
        range.description(), allocation.description());
    std::vector<PeerMemoryAccess> access = options.access;
    if (access.empty()) access.push_back({.device = allocation_box->ordinal, .access = MemoryAccess::read_write});
    detail::check_access_list(access, system::device_count(), "VirtualMemoryMapping::map");
    auto box = std::make_shared<detail::VirtualMemoryMappingBox>();
    box->offset = offset;
    box->allocation_offset = options.allocation_offset;
    box->size = size;
    box->range = range_box;
    box->allocation = allocation_box;
    const CUdeviceptr address = range_box->handle + offset;
    detail::ContextScope scope(*allocation_box->context);
    detail::check(detail::driver().cuMemMap(address, size, options.allocation_offset, allocation_box->handle, 0),
                  "cuMemMap", [&] {
                      return std::to_string(size) + " bytes at offset " + std::to_string(offset) + " of " +
                             range.description() + " from " + allocation.description();
                  });
    box->handle = address;  // mapped: unmapped by the box from here on, also when set_access fails
    detail::set_access_of(*box, access, "VirtualMemoryMapping::map");
    return detail::BoxAccess::make<VirtualMemoryMapping>(std::move(box));
}

std::size_t VirtualMemoryMapping::size() const noexcept { return box() ? box()->size : 0; }
std::size_t VirtualMemoryMapping::offset() const noexcept { return box() ? box()->offset : 0; }
int VirtualMemoryMapping::device_ordinal() const noexcept {
    return box() && box()->allocation ? box()->allocation->ordinal : -1;
}

void VirtualMemoryMapping::set_access(const std::vector<PeerMemoryAccess>& access) {
    const auto& box = open_box("VirtualMemoryMapping::set_access");
    detail::set_access_of(*box, access, "VirtualMemoryMapping::set_access");
}

MemoryAccess VirtualMemoryMapping::access(int device) const {
    const auto& box = open_box("VirtualMemoryMapping::access");
    const int count = system::device_count();
    if (device < 0 || device >= count)
        throw InvalidArgumentError("VirtualMemoryMapping::access: device " + std::to_string(device) +
                                   " does not exist (" + std::to_string(count) + " devices)");
    CUmemLocation location{};
    location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    location.id = device;
    unsigned long long flags = 0;
    detail::check(detail::driver().cuMemGetAccess(&flags, &location, box->handle), "cuMemGetAccess",
                  [&] { return "device " + std::to_string(device) + " on " + detail::describe_mapping(*box); });
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return MemoryAccess::read_write;
    if (flags == CU_MEM_ACCESS_FLAGS_PROT_READ) return MemoryAccess::read;
    return MemoryAccess::none;
}

Buffer VirtualMemoryMapping::as_buffer() const {
    const auto& box = open_box("VirtualMemoryMapping::as_buffer");
    return Buffer::from_handle(box->handle, box->size, nullptr, std::shared_ptr<void>(box));
}

std::string VirtualMemoryMapping::description() const {
    if (box()) return detail::describe_mapping(*box());
    return is_closed() ? closed_description() : "empty VirtualMemoryMapping";
}

void VirtualMemoryMapping::close() {
    if (box()) close_as(description());
}

Buffer as_buffer(std::span<const VirtualMemoryMapping> mappings) {
    if (mappings.empty()) throw InvalidArgumentError("as_buffer: no mappings");
    auto held = std::make_shared<std::vector<std::shared_ptr<detail::VirtualMemoryMappingBox>>>();
    std::size_t size = 0;
    for (const VirtualMemoryMapping& mapping : mappings) {
        const auto& box = detail::open_box_of(mapping, "as_buffer");
        if (!held->empty()) {
            const auto& previous = *held->back();
            if (box->range != previous.range || box->handle != previous.handle + previous.size)
                throw InvalidArgumentError("as_buffer: " + mapping.description() +
                                           " does not follow " + detail::describe_mapping(previous) +
                                           " in the same range (mappings must be of one range, in "
                                           "address order, without gaps)");
        }
        held->push_back(box);
        size += box->size;
    }
    return Buffer::from_handle(held->front()->handle, size, nullptr, std::shared_ptr<void>(held));
}

}  // namespace cudacore
