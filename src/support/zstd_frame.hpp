// One zstd frame that states its size: the payload of the header bundle and cache artefact files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Reports why a frame is refused, in its file format's words; throws, never returns.
using RefuseFrame = void (*)(const std::string& why);

// `payload` as one frame compressed at `level`. Throws SerializationError
// "FAILING_CALL: ZSTD_compress failed: ...". Thread-safe.
std::string zstd_frame(std::string_view payload, int level, const std::string& failing_call);

// The payload of `frame`, which must be exactly one zstd frame stating `payload_size` (what the
// file's header says) and decompressing to it: nothing is allocated on the word of a frame alone.
// Anything else goes to `refuse` with the reason. Thread-safe.
std::string zstd_frame_payload(std::string_view frame, std::uint64_t payload_size, RefuseFrame refuse);

}  // namespace cudacore::detail
