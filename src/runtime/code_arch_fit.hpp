// Whether loaded code can run on a device, told from the code's own bytes where that is certain,
// so that ObjectCode loading need not force the module into a context to find out.
#pragma once

#include "cudacore/object_code.hpp"

#include <string_view>

namespace cudacore::detail {

enum class ArchFit {
    runs,        // built for exactly this device's arch
    cannot_run,  // SASS for another major version, or a newer minor one: the driver would refuse
    ask_driver,  // anything else (older minor, PTX to JIT, unreadable bytes): load and see
};

// A cubin's fit from its ELF header (e_flags' SM number), for a device of compute capability
// major.minor. Never throws; malformed bytes give ask_driver (the driver then says why).
ArchFit cubin_arch_fit(std::string_view cubin, int major, int minor) noexcept;

// A fatbin's fit from its entries (validated as loading validates them): runs when an ELF entry
// is built for exactly this arch; cannot_run when every entry is ELF and none can run here.
ArchFit fatbin_arch_fit(std::string_view fatbin, int major, int minor) noexcept;

}  // namespace cudacore::detail
