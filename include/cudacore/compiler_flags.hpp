/// @file
/// What ProgramOptions become: the target arch, the flags NVRTC and libNVVM are given, and the
/// nvJitLink options of a PTX program; the one place fields turn into flags, so a compile, its
/// cache key and Program::flags() agree. Pure functions, thread-safe; options without a flag are
/// refused with InvalidArgumentError naming the field.
#pragma once

#include "cudacore/linker_options.hpp"
#include "cudacore/program_options.hpp"

#include <string>
#include <vector>

namespace cudacore {

/// The arch with "sm_" added to a bare number ("90" -> "sm_90"); InvalidArgumentError for others.
std::string normalize_arch(const std::string& arch);
/// The current device's arch ("sm_90"); InvalidArgumentError without a driver or device.
std::string current_device_arch(const char* what_needs_it);

/// `options.arch` normalised, or the current device's arch when unset.
std::string resolve_arch(const ProgramOptions& options);

/// The NVRTC flags for `options`, in a fixed order; `lto` adds -dlto.
std::vector<std::string> nvrtc_flags(const ProgramOptions& options, bool lto = false);

/// Whether compiling `options` uses NVRTC's automatic PCH by its flags (false with
/// header_bundles, whose compiles add it themselves).
bool uses_automatic_pch(const ProgramOptions& options);

/// The toolkit include directories toolkit_include_path adds (those that exist).
std::vector<std::string> toolkit_include_dirs();

/// The libNVVM flags for an NVVM IR program, in NVVM's spelling and a fixed order; `lto` adds
/// -gen-lto.
std::vector<std::string> nvvm_flags(const ProgramOptions& options, bool lto = false);

/// The LinkerOptions that compile a PTX program the way `options` asks.
LinkerOptions to_linker_options(const ProgramOptions& options);

}  // namespace cudacore
