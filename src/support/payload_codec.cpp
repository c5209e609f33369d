#include "support/payload_codec.hpp"

#include "cudacore/errors.hpp"

#include <zstd.h>

namespace cudacore::detail {

std::string zstd_frame(std::string_view payload, int level, const std::string& failing_call) {
    std::string compressed(ZSTD_compressBound(payload.size()), '\0');
    const std::size_t written =
        ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), level);
    if (ZSTD_isError(written))
        throw SerializationError(failing_call + ": ZSTD_compress failed: " + ZSTD_getErrorName(written));
    compressed.resize(written);
    return compressed;
}

std::string zstd_frame_payload(std::string_view frame, std::uint64_t payload_size, RefusePayload refuse) {
    const unsigned long long frame_size = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (frame_size == ZSTD_CONTENTSIZE_ERROR || frame_size == ZSTD_CONTENTSIZE_UNKNOWN)
        refuse("the payload is not a zstd frame with a stated size");
    if (frame_size != payload_size) {
        refuse("the zstd frame holds " + std::to_string(frame_size) + " bytes, the header says " +
               std::to_string(payload_size));
    }
    const std::size_t frame_bytes = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
    if (ZSTD_isError(frame_bytes) || frame_bytes != frame.size())
        refuse("the payload is not exactly one zstd frame");
    std::string payload(static_cast<std::size_t>(payload_size), '\0');
    const std::size_t got = ZSTD_decompress(payload.data(), payload.size(), frame.data(), frame.size());
    if (ZSTD_isError(got)) refuse(std::string("ZSTD_decompress failed: ") + ZSTD_getErrorName(got));
    if (got != payload.size()) {
        refuse("the payload decompressed to " + std::to_string(got) + " bytes, the header says " +
               std::to_string(payload.size()));
    }
    return payload;
}

}  // namespace cudacore::detail
