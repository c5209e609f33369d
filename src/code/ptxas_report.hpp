// Whether options ask ptxas for its report of each kernel's registers and memory (-v).
// The report exists only when ptxas runs: NVRTC and nvJitLink keep a cache of the code they made
// (nvJitLink's is the driver's compute cache), and a hit returns the code with no report at all.
// So a compile or link that asks for it is not served from their cache (--no-cache / -no-cache),
// unless the caller set no_cache itself.
#pragma once

#include <string>
#include <vector>

namespace cudacore::detail {

inline bool asks_ptxas_report(const std::vector<std::string>& ptxas_options) {
    for (const auto& option : ptxas_options)
        if (option == "-v" || option == "--verbose") return true;
    return false;
}

}  // namespace cudacore::detail
