/// @file
/// Header bundles built into the executable: the CMake function cudacore_add_header_bundle
/// (cmake/cudacore_header_bundle.cmake, installed with the package) makes a bundle during the
/// build and links its bytes into a target, where embedded_header_bundle("<name>") returns it.
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

/// The bundle built into this program under `name`, read (and checked) on the first call and
/// kept: later calls return a copy that shares its headers. Thread-safe. Throws
/// InvalidArgumentError naming the bundles this program has when none is called `name`, and
/// SerializationError when the built-in bytes do not read back.
HeaderBundle embedded_header_bundle(std::string_view name);

/// The names of the bundles built into this program, sorted.
std::vector<std::string> embedded_header_bundle_names();

/// Called by the code cudacore_add_header_bundle generates, before main(): records `size` bytes
/// at `bytes` (static storage, never copied) under `name`. A second bundle of the same name is
/// ignored. Never throws.
void register_embedded_header_bundle(const char* name, const unsigned char* bytes,
                                     std::size_t size) noexcept;

}  // namespace cudacore
