/// @file
/// What ProgramOptions become: the target arch, the flags NVRTC and libNVVM are given, and the
/// nvJitLink options of a PTX program. The one place option fields turn into flags, so a compile,
/// its cache key and Program::flags() agree. No driver or compiler is needed, except where a
/// function says it reads the current device. Thread-safe: pure functions.
#pragma once

#include "cudacore/linker_options.hpp"
#include "cudacore/program_options.hpp"

#include <string>
#include <vector>

namespace cudacore {

/// The arch with "sm_" added to a bare number ("90" -> "sm_90"). Throws InvalidArgumentError
/// for anything that is not sm_NN[a|f], compute_NN[a|f] or NN.
std::string normalize_arch(const std::string& arch);
/// The current device's arch ("sm_90"). Throws InvalidArgumentError, saying to set arch, when
/// there is no driver or no device.
std::string current_device_arch(const char* what_needs_it);

/// `options.arch` normalised, or the current device's arch when unset (see above).
std::string resolve_arch(const ProgramOptions& options);

/// The NVRTC flags for `options`, in a fixed order (the one place fields become flags). `lto`
/// adds -dlto when link_time_optimization is not already set (the ltoir target needs it).
std::vector<std::string> nvrtc_flags(const ProgramOptions& options, bool lto = false);

/// Whether compiling `options` uses NVRTC's automatic PCH (pch, or pch unset and no explicit
/// create_pch / use_pch) by its flags. False with header_bundles: their compiles add automatic
/// PCH themselves when the bundles are read from their folders (ProgramOptions::header_bundles).
bool uses_automatic_pch(const ProgramOptions& options);

/// The toolkit include directories added when toolkit_include_path is set (those that exist).
std::vector<std::string> toolkit_include_dirs();

/// The libNVVM flags for an NVVM IR program, in NVVM's own spelling and a fixed order: -arch=
/// compute_NN (from arch, sm_NN read as compute_NN), -opt=0|3 (device_code_optimize), -g (debug),
/// -ftz=, -prec-sqrt=, -prec-div=, -fma= (0|1), -gen-lto (link_time_optimization, or `lto` for
/// the ltoir target), then extra_flags. Any other option set is refused with
/// InvalidArgumentError naming each field, since libNVVM has no such flag.
std::vector<std::string> nvvm_flags(const ProgramOptions& options, bool lto = false);

/// The LinkerOptions that compile a PTX program the way `options` asks (arch, debug, lineinfo,
/// max_register_count, ftz, prec_*, fma, ptxas_options, link_time_optimization, split_compile,
/// time, no_cache). Fields nvJitLink has no flag for are refused with InvalidArgumentError.
LinkerOptions to_linker_options(const ProgramOptions& options);

}  // namespace cudacore
