/// @file
/// Kept for code that includes it: the calls that turn ProgramOptions into flags
/// (normalize_arch, resolve_arch, nvrtc_flags, nvvm_flags, to_linker_options...) are declared in
/// program_options.hpp, beside the options, and their code is src/code/program_options.cpp.
#pragma once

#include "cudacore/program_options.hpp"
