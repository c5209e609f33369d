#include "support/payload_codec.hpp"

#include "cudacore/errors.hpp"

#include <zstd.h>

#include <algorithm>
#include <new>

namespace cudacore::detail {

namespace {

// Decompressed a piece at a time: the buffer zstd suggests for one block (128 KiB).
const std::size_t piece_size = ZSTD_DStreamOutSize();

}  // namespace

std::string zstd_frame(std::string_view payload, int level, const std::string& failing_call) {
    std::string compressed(ZSTD_compressBound(payload.size()), '\0');
    const std::size_t written =
        ZSTD_compress(compressed.data(), compressed.size(), payload.data(), payload.size(), level);
    if (ZSTD_isError(written))
        throw SerializationError(failing_call + ": ZSTD_compress failed: " + ZSTD_getErrorName(written));
    compressed.resize(written);
    return compressed;
}

struct ZstdPayloadReader::Stream {
    ZSTD_DStream* stream = ZSTD_createDStream();
    ~Stream() { ZSTD_freeDStream(stream); }
};

ZstdPayloadReader::ZstdPayloadReader(std::string_view frame, std::uint64_t payload_size,
                                     RefusePayload refuse)
    : stream_(std::make_unique<Stream>()), frame_(frame), payload_size_(payload_size), refuse_(refuse) {
    if (stream_->stream == nullptr) throw std::bad_alloc();
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
    const std::size_t set = ZSTD_DCtx_setParameter(stream_->stream, ZSTD_d_windowLogMax, zstd_window_log_max);
    if (ZSTD_isError(set)) refuse(std::string("ZSTD_DCtx_setParameter failed: ") + ZSTD_getErrorName(set));
}

ZstdPayloadReader::~ZstdPayloadReader() = default;

void ZstdPayloadReader::need(std::uint64_t size, std::string_view what) const {
    if (size > remaining()) {
        refuse_(std::string(what) + " at payload offset " + std::to_string(position_) + " needs " +
                std::to_string(size) + " bytes but only " + std::to_string(remaining()) + " remain");
    }
}

void ZstdPayloadReader::fill(std::string_view what) {
    // One byte more than the header leaves room for: a frame that runs long is caught at once.
    const std::uint64_t produced = position_;
    const std::uint64_t room = std::min<std::uint64_t>(piece_size, payload_size_ - produced + 1);
    buffer_.resize(static_cast<std::size_t>(room));
    buffer_at_ = 0;
    ZSTD_outBuffer output{buffer_.data(), buffer_.size(), 0};
    while (output.pos == 0) {
        ZSTD_inBuffer input{frame_.data(), frame_.size(), frame_position_};
        const std::size_t result = ZSTD_decompressStream(stream_->stream, &output, &input);
        frame_position_ = input.pos;
        if (ZSTD_isError(result))
            refuse_(std::string("ZSTD_decompressStream failed: ") + ZSTD_getErrorName(result));
        frame_done_ = result == 0;
        if (output.pos == 0 && (result == 0 || input.pos == input.size)) {
            refuse_("the payload ends at offset " + std::to_string(produced) + ", reading " +
                    std::string(what) + "; the header says " + std::to_string(payload_size_) + " bytes");
        }
    }
    buffer_.resize(output.pos);
    if (output.pos > payload_size_ - produced) {
        refuse_("the payload decompresses to more than the " + std::to_string(payload_size_) +
                " bytes the header says");
    }
}

void ZstdPayloadReader::append(std::string& out, std::uint64_t size, std::string_view what) {
    need(size, what);
    while (size > 0) {
        if (buffer_at_ == buffer_.size()) fill(what);
        const std::size_t take = static_cast<std::size_t>(
            std::min<std::uint64_t>(size, buffer_.size() - buffer_at_));
        out.append(buffer_, buffer_at_, take);
        buffer_at_ += take;
        position_ += take;
        size -= take;
    }
}

std::uint64_t ZstdPayloadReader::integer(int size, std::string_view what) {
    std::string bytes;
    append(bytes, static_cast<std::uint64_t>(size), what);
    return read_little_endian(bytes, 0, size);
}

void ZstdPayloadReader::finish() {
    if (remaining() != 0) {
        refuse_(std::to_string(remaining()) + " of the " + std::to_string(payload_size_) +
                " payload bytes were not read");
    }
    if (buffer_at_ != buffer_.size()) {
        refuse_("the payload decompresses to more than the " + std::to_string(payload_size_) +
                " bytes the header says");
    }
    // The frame must end here (its epilogue read, nothing decompressed beyond the stated size).
    if (!frame_done_) {
        char extra = 0;
        ZSTD_outBuffer output{&extra, 1, 0};
        ZSTD_inBuffer input{frame_.data(), frame_.size(), frame_position_};
        const std::size_t result = ZSTD_decompressStream(stream_->stream, &output, &input);
        frame_position_ = input.pos;
        if (ZSTD_isError(result))
            refuse_(std::string("ZSTD_decompressStream failed: ") + ZSTD_getErrorName(result));
        if (output.pos != 0) {
            refuse_("the payload decompresses to more than the " + std::to_string(payload_size_) +
                    " bytes the header says");
        }
        frame_done_ = result == 0;
    }
    if (!frame_done_ || frame_position_ != frame_.size())
        refuse_("the zstd frame does not end after the " + std::to_string(payload_size_) + " payload bytes");
}

std::string zstd_frame_payload(std::string_view frame, std::uint64_t payload_size, RefusePayload refuse) {
    ZstdPayloadReader reader(frame, payload_size, refuse);
    std::string payload;
    reader.append(payload, payload_size, "the payload");
    reader.finish();
    return payload;
}

}  // namespace cudacore::detail
