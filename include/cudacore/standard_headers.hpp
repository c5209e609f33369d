/// @file
/// The C++ standard headers that kernels written for nvcc include (\<type_traits\>, \<limits\>,
/// \<cstdint\>, \<cmath\>, \<tuple\>, \<utility\>, \<cassert\>, \<cstdio\>...) and NVRTC does not
/// have, made available to NVRTC by cudacore (ProgramOptions::std_headers = true).
///
/// Each is a short header: where CCCL has the header (\<cuda/std/type_traits\>) it includes CCCL's
/// and brings its names into namespace std (`namespace std { using namespace cuda::std; }`, as
/// jitify does), so std::is_same_v, std::numeric_limits and std::tuple work in device code; where
/// CCCL has none or leaves names out, cudacore's own declares them (\<cstdio\>: std::printf;
/// \<cfloat\>: FLT_MAX and the rest; \<cmath\>: std::fma, std::fmod, std::erf... from the device
/// math library). The C forms (\<stdint.h\>, \<math.h\>...) include the C++ ones. The list is
/// standard_headers().headers() (docs/compiling.md, "Standard headers").
#pragma once

#include "cudacore/header_bundle.hpp"

namespace cudacore {

/// The standard headers as a HeaderBundle named "cudacore-standard-headers" (made once, shared by
/// the copies returned). A compile with ProgramOptions::std_headers reads them from the bundle's
/// folder (HeaderBundle::folder()), searched after every other include folder, so a header of
/// the same name of the user's or the toolkit's wins. Give it in ProgramOptions::header_bundles
/// (after the bundle holding CCCL's \<cuda/std/...\> headers) to a program that compiles from
/// bundles only. Thread-safe; throws std::bad_alloc only.
HeaderBundle standard_headers();

}  // namespace cudacore
