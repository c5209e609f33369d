// The payload of cudacore's file formats (header bundles, cache artefacts): one zstd frame that
// states its size, then fields read in order, each length checked against the bytes left.
#pragma once

#include "support/little_endian.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Reports why a payload is refused, in its file format's words; throws, never returns.
using RefusePayload = void (*)(const std::string& why);

// `payload` as one frame compressed at `level`. Throws SerializationError
// "FAILING_CALL: ZSTD_compress failed: ...". Thread-safe.
std::string zstd_frame(std::string_view payload, int level, const std::string& failing_call);

// The payload of `frame`, which must be exactly one zstd frame stating `payload_size` (what the
// file's header says) and decompressing to it: nothing is allocated on the word of a frame alone.
// Anything else goes to `refuse` with the reason. Thread-safe.
std::string zstd_frame_payload(std::string_view frame, std::uint64_t payload_size, RefusePayload refuse);

// Reads a payload's fields in order; a field longer than the bytes left goes to `refuse` ("WHAT
// at payload offset N needs S bytes but only R remain"). Views point into `bytes`.
class PayloadReader {
public:
    PayloadReader(std::string_view bytes, RefusePayload refuse) : bytes_(bytes), refuse_(refuse) {}
    // A little-endian integer of `size` bytes.
    std::uint64_t integer(int size, std::string_view what) {
        need(static_cast<std::uint64_t>(size), what);
        const std::uint64_t value = read_little_endian(bytes_, position_, size);
        position_ += static_cast<std::size_t>(size);
        return value;
    }
    // The next `size` bytes.
    std::string_view text(std::uint64_t size, std::string_view what) {
        need(size, what);
        const std::string_view out = bytes_.substr(position_, static_cast<std::size_t>(size));
        position_ += static_cast<std::size_t>(size);
        return out;
    }
    std::size_t remaining() const { return bytes_.size() - position_; }

private:
    void need(std::uint64_t size, std::string_view what) const {
        if (size > remaining()) {
            refuse_(std::string(what) + " at payload offset " + std::to_string(position_) +
                    " needs " + std::to_string(size) + " bytes but only " +
                    std::to_string(remaining()) + " remain");
        }
    }
    std::string_view bytes_;
    std::size_t position_ = 0;
    RefusePayload refuse_;
};

}  // namespace cudacore::detail
