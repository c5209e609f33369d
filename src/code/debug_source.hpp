// The file a C++ program's source is written to when it is compiled with debug or line
// information, so that a debugger finds the source its line table names (NVRTC names the source
// by the program's name: the absolute path of this file is passed as that name).
#pragma once

#include "cudacore/program_options.hpp"

#include <filesystem>
#include <string>

namespace cudacore::detail {

// Whether `options` ask for debug or line information (debug, lineinfo, or their flags among
// extra_flags).
bool wants_debug_source(const ProgramOptions& options);

// The folder debug sources go to: options.debug_source_dir, else $CUDACORE_DEBUG_SOURCE_DIR,
// else <$TMPDIR or /tmp>/cudacore-jit-sources-<uid>; made absolute. Never throws except
// std::bad_alloc.
std::filesystem::path debug_source_folder(const ProgramOptions& options);

// <folder>/<XXH3-128 of source, hex>/<options.name, '/' and control characters as '_'>.
std::filesystem::path debug_source_path(const std::string& source, const ProgramOptions& options);

// Writes `source` to `path` unless a file there already holds exactly it (atomically: a reader
// never sees part of it). The folders are made as needed (0700 for the default one, which must
// then belong to this user). Throws CompilerApiError naming the failing step, errno and the path.
void write_debug_source(const std::filesystem::path& path, const std::string& source,
                        const ProgramOptions& options);

}  // namespace cudacore::detail
