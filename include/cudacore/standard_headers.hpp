/// @file
/// The C++ standard headers nvcc kernels include and NVRTC lacks, made available by
/// ProgramOptions::std_headers (docs/compiling.md, "Standard headers").
#pragma once

#include "cudacore/header_bundle.hpp"

namespace cudacore {

/// The standard headers as a HeaderBundle (made once, shared). Thread-safe.
HeaderBundle standard_headers();

}  // namespace cudacore
