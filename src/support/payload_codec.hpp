// The payload of cudacore's file formats (header bundles, cache artefacts): one zstd frame that
// states its size, then fields read in order, each length checked against the bytes left.
// Decompression is streamed: bytes are produced only as they are read, never more than the size
// the file states, so what a payload costs is what its fields really hold, never what its header
// or its frame announce.
#pragma once

#include "support/little_endian.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace cudacore::detail {

// Reports why a payload is refused, in its file format's words; throws, never returns.
using RefusePayload = void (*)(const std::string& why);

// The largest window a frame may ask the decompressor for (2^23 bytes, 8 MiB): what our own
// levels (9 and 15) use at most, so a frame cannot make the decompressor allocate more.
inline constexpr int zstd_window_log_max = 23;

// `payload` as one frame compressed at `level`. Throws SerializationError
// "FAILING_CALL: ZSTD_compress failed: ...". Thread-safe.
std::string zstd_frame(std::string_view payload, int level, const std::string& failing_call);

// Reads the payload of `frame`, which must be exactly one zstd frame stating `payload_size` (what
// the file's header says) and decompressing to just that, in order and a piece at a time (a
// streaming decompressor with a bounded window): what is read is produced then, so a frame that
// lies costs at most the bytes read before it is caught. Anything wrong goes to `refuse` with the
// reason ("WHAT at payload offset N needs S bytes but only R remain"). Not thread-safe (one
// reader per thread).
class ZstdPayloadReader {
public:
    // Checks the frame's header against `payload_size`; refuses a frame that states another size
    // or none, is not exactly one frame, or asks for a window over zstd_window_log_max.
    ZstdPayloadReader(std::string_view frame, std::uint64_t payload_size, RefusePayload refuse);
    ~ZstdPayloadReader();
    ZstdPayloadReader(const ZstdPayloadReader&) = delete;
    ZstdPayloadReader& operator=(const ZstdPayloadReader&) = delete;

    // A little-endian integer of `size` (at most 8) bytes.
    std::uint64_t integer(int size, std::string_view what);
    // The next `size` bytes, appended to `out` as they are decompressed: `out` grows with the
    // bytes produced, not with `size`.
    void append(std::string& out, std::uint64_t size, std::string_view what);
    // The next `size` bytes.
    std::string text(std::uint64_t size, std::string_view what) {
        std::string out;
        append(out, size, what);
        return out;
    }
    // Payload bytes not read yet (as the header states them).
    std::uint64_t remaining() const noexcept { return payload_size_ - position_; }
    // Refuses unless every stated byte was read and the frame holds no more.
    void finish();

private:
    void need(std::uint64_t size, std::string_view what) const;
    // Decompresses the next piece into buffer_; refuses a frame that ends early or runs long.
    void fill(std::string_view what);

    struct Stream;
    std::unique_ptr<Stream> stream_;
    std::string_view frame_;
    std::size_t frame_position_ = 0;
    std::uint64_t payload_size_;
    std::uint64_t position_ = 0;  // payload bytes handed out
    std::string buffer_;          // decompressed, not yet handed out from buffer_at_
    std::size_t buffer_at_ = 0;
    bool frame_done_ = false;  // zstd said the frame ended
    RefusePayload refuse_;
};

// The whole payload of `frame` (ZstdPayloadReader's checks), for formats small enough to parse in
// memory: produced as it is decompressed, never allocated on the word of a header or a frame.
// Thread-safe.
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
