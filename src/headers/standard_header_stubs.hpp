// The standard headers CCCL has no device form of (<exception>, <string>, <vector>, <iostream>,
// <mutex>, <cstdarg>...): cudacore's own short forms, so that code written for the host that
// includes them compiles under NVRTC. Internal: part of standard_headers().
#pragma once

#include "cudacore/header_bundle.hpp"

#include <vector>

namespace cudacore::detail {

// Each header's name and text (what each declares: docs/compiling.md, "Standard headers").
// Throws std::bad_alloc only.
std::vector<BundledHeader> standard_header_stubs();

}  // namespace cudacore::detail
