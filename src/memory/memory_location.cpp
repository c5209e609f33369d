// A memory location: its driver form, and its text for messages.
#include "cudacore/memory_location.hpp"

#include "support/enum_text.hpp"

#include <optional>
#include <string>

namespace cudacore {

std::string to_string(MemoryLocation::Kind kind) {
    static constexpr detail::EnumText<MemoryLocation::Kind> names[] = {
        {MemoryLocation::Kind::device, "device"},
        {MemoryLocation::Kind::host, "host"},
        {MemoryLocation::Kind::host_numa, "host_numa"},
    };
    return detail::enum_text(kind, names, "MemoryLocation::Kind");
}

CUmemLocation MemoryLocation::to_driver() const noexcept {
    CUmemLocation location{};
    switch (kind) {
        case Kind::device:
            location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            location.id = id;
            break;
        case Kind::host:
            location.type = CU_MEM_LOCATION_TYPE_HOST;
            location.id = 0;
            break;
        case Kind::host_numa:
            location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
            location.id = id;
            break;
    }
    return location;
}

std::optional<MemoryLocation> MemoryLocation::from_driver(CUmemLocationType type, int id) noexcept {
    switch (type) {
        case CU_MEM_LOCATION_TYPE_DEVICE: return device(id);
        case CU_MEM_LOCATION_TYPE_HOST: return host();
        case CU_MEM_LOCATION_TYPE_HOST_NUMA: return host_numa(id);
        default: return std::nullopt;
    }
}

std::string MemoryLocation::description() const {
    switch (kind) {
        case Kind::device: return "device " + std::to_string(id);
        case Kind::host: return "host";
        case Kind::host_numa: return "host NUMA node " + std::to_string(id);
    }
    return "?";
}

}  // namespace cudacore
