// memory_location.hpp's enumeration names.
#include "cudacore/memory_location.hpp"

#include "support/enum_text.hpp"

namespace cudacore {

std::string to_string(MemoryLocation::Kind kind) {
    static constexpr detail::EnumText<MemoryLocation::Kind> names[] = {
        {MemoryLocation::Kind::device, "device"},
        {MemoryLocation::Kind::host, "host"},
        {MemoryLocation::Kind::host_numa, "host_numa"},
    };
    return detail::enum_text(kind, names, "MemoryLocation::Kind");
}

}  // namespace cudacore
