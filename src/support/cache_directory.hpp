// Where cudacore keeps what it caches on disk for the user, from the environment: the default
// program cache (default_cache_directory) and the header bundles written out as folders for
// NVRTC's precompiled headers. One rule for both, so they share one folder.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cudacore::detail {

// The subfolder of the cache folder that holds header bundles written out as folders (one per
// bundle digest); the program cache's eviction and prune leave it alone, its clear removes it.
inline constexpr std::string_view kHeaderBundleFolders = "header-bundles";

// The file in a disk cache's folder that holds the builds of compiler libraries whose file names
// carry none (code/compiler_identity.hpp); the program cache's eviction and prune leave it alone,
// as they do the file of major.minor versions that earlier versions wrote.
inline constexpr std::string_view kCompilerBuildsFile = "compiler-builds";
inline constexpr std::string_view kOlderCompilerVersionsFile = "compiler-versions";

struct CacheDirectory {
    std::filesystem::path path;  // empty when `problem` is set
    // Why there is none: "CUDACORE_CACHE_DIR='x' is a relative path; set it to an absolute
    // path", or that no variable names one.
    std::string problem;
};

// $CUDACORE_CACHE_DIR, else $XDG_CACHE_HOME/cudacore, else $HOME/.cache/cudacore. Empty values
// are ignored, and relative XDG_CACHE_HOME / HOME values too (as the XDG spec asks); a relative
// CUDACORE_CACHE_DIR is a problem (it names the folder explicitly). Reads the environment now.
// Never throws.
CacheDirectory cache_directory_from_environment() noexcept;

// Whether CUDACORE_DISABLE_CACHE is set to something other than "" or "0": then nothing is kept
// in the cache folder (no program cache, no header bundle folders). Never throws.
bool cache_disabled_in_environment() noexcept;

}  // namespace cudacore::detail
