/// @file
/// The C++ standard headers that nvcc kernels include and NVRTC lacks (\<type_traits\>,
/// \<cstdint\>, \<cmath\>, \<vector\>...), made available by ProgramOptions::std_headers: each
/// includes CCCL's header and brings its names into std, or declares what CCCL lacks;
/// host-only headers only declare their classes. The list is standard_headers().headers();
/// docs/compiling.md, "Standard headers", says what each offers.
#pragma once

#include "cudacore/header_bundle.hpp"

namespace cudacore {

/// The standard headers as a HeaderBundle (made once, shared), searched after every other include
/// folder. Thread-safe; throws std::bad_alloc only.
HeaderBundle standard_headers();

}  // namespace cudacore
