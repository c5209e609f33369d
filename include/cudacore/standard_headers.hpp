/// @file
/// The C++ standard headers that kernels written for nvcc include (\<type_traits\>, \<limits\>,
/// \<cstdint\>, \<cmath\>, \<algorithm\>, \<vector\>, \<iostream\>, \<cassert\>...) and NVRTC does
/// not have, made available to NVRTC by cudacore (ProgramOptions::std_headers = true).
///
/// Each is a short header: where CCCL has the header (\<cuda/std/type_traits\>) it includes CCCL's
/// and brings its names into namespace std (`namespace std { using namespace cuda::std; }`, as
/// jitify does), so std::is_same_v, std::tuple and std::max work in device code; std::numeric_limits
/// is a template of std's own (CCCL's values) that a program can specialize for its types; where
/// CCCL has none or leaves names out, cudacore's own declares them (\<cstdio\>: std::printf;
/// \<cfloat\>: FLT_MAX and the rest; \<cmath\>: std::fma, std::erf...; \<cstdarg\>: va_list;
/// \<exception\>, \<stdexcept\>: the error classes). Headers of host-only facilities (\<string\>,
/// \<vector\>, \<map\>, \<iostream\>, \<mutex\>...) only declare their classes, so that host
/// declarations naming them compile. The C forms (\<stdint.h\>, \<math.h\>...) include the C++ ones.
/// The list is standard_headers().headers(); docs/compiling.md, "Standard headers", says what
/// each offers.
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
