// Reporting a failed release (a destructor's driver call) to the warning handler, unless the
// failure only says the driver or the context is going away (the normal end of a process).
#pragma once

#include <cuda.h>

#include <string>

namespace cudacore::detail {

// True for the statuses a release meets at exit or after a device reset: never reported.
bool is_shutdown_status(CUresult status) noexcept;

// Reports "CALL failed: NAME (N): TEXT [OBJECT] while releasing" as WarningKind::release_failed
// unless `status` is success or a shutdown status. Never throws.
void report_release_failure(CUresult status, const char* call, const std::string& object) noexcept;

// The cheap form for destructors: builds the object's description only on failure.
template <class Describe>
inline void check_release(CUresult status, const char* call, Describe&& describe) noexcept {
    if (status == CUDA_SUCCESS) [[likely]] return;
    if (is_shutdown_status(status)) return;
    try {
        report_release_failure(status, call, describe());
    } catch (...) {
    }
}

}  // namespace cudacore::detail
