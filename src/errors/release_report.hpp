// Reporting a failed release (a destructor's driver call) to the warning handler. Which failures
// are worth it is the reset-tolerance rule's to say (runtime/reset_tolerance.hpp: check_release).
#pragma once

#include <cuda.h>

#include <string>

namespace cudacore::detail {

// Reports "CALL failed: NAME (N): TEXT [OBJECT] while releasing" as WarningKind::release_failed
// (nothing for success). Never throws.
void report_release_failure(CUresult status, const char* call, const std::string& object) noexcept;

}  // namespace cudacore::detail
