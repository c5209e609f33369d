// The folder NVRTC finds cudacore's standard headers in (ProgramOptions::std_headers), and how
// the program cache keys it. Internal: nvrtc_flags and the cache key.
#pragma once

#include <string>

namespace cudacore::detail {

// The folder of standard_headers() (its HeaderBundle::folder(), checked and remade when damaged),
// or empty when no folder can be had (no cache folder, a read-only file system): then a
// WarningKind::pch_off-like warning is given once per process and reason, and the compile goes
// on without the headers. Thread-safe.
std::string standard_headers_folder();

// `flag` as the cache key takes it: the standard headers' --include-path flag as the bundle's
// digest (its folder's path differs between users and machines), any other flag as it is.
std::string standard_headers_key_flag(const std::string& flag);

}  // namespace cudacore::detail
