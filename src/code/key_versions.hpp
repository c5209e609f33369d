// The compiler versions every cache key holds (cache_key.cpp), for what records where entries
// came from (cache artefacts). Internal.
#pragma once

#include <string>

namespace cudacore::detail {

// NVRTC's "major.minor" as cache_key() puts it in keys, or "none" when NVRTC cannot be loaded.
std::string nvrtc_version_in_keys();
// nvJitLink's "major.minor" as cache_key() puts it in keys, or "none".
std::string nvjitlink_version_in_keys();

}  // namespace cudacore::detail
