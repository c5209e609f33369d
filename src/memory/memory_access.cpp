// memory_access.hpp's enumeration names.
#include "cudacore/memory_access.hpp"

#include "support/enum_text.hpp"

namespace cudacore {

std::string to_string(MemoryAccess access) {
    static constexpr detail::EnumText<MemoryAccess> names[] = {
        {MemoryAccess::none, "none"},
        {MemoryAccess::read, "read"},
        {MemoryAccess::read_write, "read_write"},
    };
    return detail::enum_text(access, names, "MemoryAccess");
}

}  // namespace cudacore
