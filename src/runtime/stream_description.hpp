// How errors name a stream: "stream 0x... on device 0" (device -1 when it has no context), the
// one wording every call on a stream uses.
#pragma once

#include "runtime/runtime_handles.hpp"

#include <string>

namespace cudacore::detail {

/// "stream 0x... on device N" for `handle` of device `ordinal`.
std::string stream_description(CUstream handle, int ordinal);
/// The same, for the stream of `box`.
std::string describe_stream(const StreamBox& box);

}  // namespace cudacore::detail
