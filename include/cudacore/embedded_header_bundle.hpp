/// @file
/// Header bundles built into the executable by the CMake function cudacore_add_header_bundle,
/// returned by embedded_header_bundle("<name>").
///
///     cudacore_add_header_bundle(my_app NAME fp16 HEADERS cuda_fp16.h "<cuda/std/cmath>")
///
///     options.header_bundles = {cudacore::embedded_header_bundle("fp16")};
#pragma once

#include "cudacore/header_bundle.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudacore {

/// The bundle built in under `name`, read on the first call and shared by later ones. Thread-safe.
/// InvalidArgumentError naming the bundles there are; SerializationError for unreadable bytes.
HeaderBundle embedded_header_bundle(std::string_view name);

/// The names of the bundles built into this program, sorted.
std::vector<std::string> embedded_header_bundle_names();

/// Records `size` bytes at `bytes` (static storage) under `name`, before main(); called by the code
/// cudacore_add_header_bundle generates. A repeated name is ignored.
void register_embedded_header_bundle(const char* name, const unsigned char* bytes,
                                     std::size_t size) noexcept;

}  // namespace cudacore
