// The folder NVRTC finds cudacore's standard headers in (ProgramOptions::std_headers), and how
// the program cache keys it. Internal: nvrtc_flags and the cache key.
#pragma once

#include "headers/bundle_folder.hpp"

#include <string>

namespace cudacore::detail {

// The folder of standard_headers() (its HeaderBundle::folder(), checked and remade when damaged),
// or empty when no folder can be had (a read-only file system): then a
// WarningKind::pch_off-like warning is given once per process and reason, and the compile goes
// on without the headers. Thread-safe.
std::string standard_headers_folder();

// Why standard_headers_folder() is empty ("no cache folder: ..."), or empty when it is not: for
// the hint of a compile that asked for the headers and did not find them. Thread-safe.
std::string standard_headers_folder_problem();

// Has the standard headers' folder made (or waits for another process or thread making it), as
// standard_headers_folder() would, but gives the wait up within about 10 ms once `give_up`
// answers true: a compile that may be cancelled calls it first, so that its flags() (which has no
// token) then finds the folder made. A folder that cannot be had is left for
// standard_headers_folder() to report. Thread-safe; never throws beyond std::bad_alloc.
void await_standard_headers_folder(const GiveUp& give_up);

// `flag` as the cache key takes it: the standard headers' --include-path flag as the bundle's
// digest (its folder's path differs between users and machines), any other flag as it is.
std::string standard_headers_key_flag(const std::string& flag);

}  // namespace cudacore::detail
