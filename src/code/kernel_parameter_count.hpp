// How many parameters a kernel takes, read from its code (no GPU, no driver).
//
// The driver only counts parameters from CUDA 13.2 (cuKernelGetParamCount); before that the count
// is found by asking cuKernelGetParamInfo index after index until it fails, and every such failure
// is an error under compute-sanitizer. The code says it: a cubin's .nv.info.<kernel> section holds
// one EIATTR_KPARAM_INFO record per parameter, and PTX declares them in the .entry signature.
// Pure functions, thread-safe; they never throw.
#pragma once

#include "cudacore/object_code.hpp"

#include <cstddef>
#include <optional>
#include <string_view>

namespace cudacore::detail {

// The parameter count of kernel `lowered_name` in `code` (cubin, PTX or fatbin), or nullopt when
// the code does not say (other code types, a kernel not found, only compressed fatbin images,
// records that do not add up: ordinals not 0..n-1, a layout beyond the parameter bank).
std::optional<std::size_t> kernel_parameter_count(CodeType type, std::string_view code,
                                                  std::string_view lowered_name) noexcept;

std::optional<std::size_t> cubin_kernel_parameter_count(std::string_view cubin,
                                                        std::string_view lowered_name) noexcept;
std::optional<std::size_t> ptx_kernel_parameter_count(std::string_view ptx,
                                                      std::string_view lowered_name) noexcept;
// From the first uncompressed ELF or PTX image of a fatbin that knows the kernel.
std::optional<std::size_t> fatbin_kernel_parameter_count(std::string_view fatbin,
                                                         std::string_view lowered_name) noexcept;

}  // namespace cudacore::detail
