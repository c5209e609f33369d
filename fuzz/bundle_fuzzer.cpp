// HeaderBundle::deserialize on arbitrary bytes: it must either return a bundle that reads back
// the same from its own serialization, or throw SerializationError; never crash, read out of
// bounds or allocate what the input merely claims. Random bytes almost never carry a valid
// checksum or zstd frame, so the first byte of an input picks how the rest is used:
//   0: as it is;
//   1: resealed: its stated compressed size and checksum are made right, to reach the frame;
//   2: as the payload itself (the 4 bytes after the mode byte are the header count), compressed
//      into one frame and sealed, to reach the reader of names and contents.
#include "cudacore/errors.hpp"
#include "cudacore/header_bundle.hpp"

#include <xxhash.h>  // inlined: XXH_INLINE_ALL comes with cudacore_internals
#include <zstd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

constexpr std::size_t header_size = 40;
constexpr unsigned char magic[8] = {0x89, 'C', 'C', 'H', 'D', 'R', '\r', '\n'};

void put(std::string& bytes, std::size_t offset, std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
}

void seal(std::string& bytes) {
    put(bytes, 24, bytes.size() - header_size, 8);
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, bytes.data(), 32);
    XXH3_64bits_update(&state, bytes.data() + header_size, bytes.size() - header_size);
    put(bytes, 32, XXH3_64bits_digest(&state), 8);
}

void check(const std::string& bytes) {
    try {
        const cudacore::HeaderBundle bundle = cudacore::HeaderBundle::deserialize(bytes);
        const cudacore::HeaderBundle again = cudacore::HeaderBundle::deserialize(bundle.serialize());
        if (again.headers() != bundle.headers() || again.name() != bundle.name() ||
            again.digest() != bundle.digest())
            std::abort();  // accepted input must round-trip
    } catch (const cudacore::SerializationError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
        case 1:
            if (bytes.size() >= header_size) seal(bytes);
            break;
        case 2: {
            if (bytes.size() < 4) return 0;
            const std::string payload = bytes.substr(4);
            std::string frame(ZSTD_compressBound(payload.size()), '\0');
            const std::size_t written =
                ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 1);
            if (ZSTD_isError(written)) return 0;
            frame.resize(written);
            std::string sealed(header_size, '\0');
            sealed.replace(0, 8, reinterpret_cast<const char*>(magic), 8);
            put(sealed, 8, cudacore::HeaderBundle::format_version, 4);
            sealed.replace(12, 4, bytes, 0, 4);  // the header count
            put(sealed, 16, payload.size(), 8);
            sealed += frame;
            seal(sealed);
            bytes = std::move(sealed);
            break;
        }
        default:
            break;
    }
    check(bytes);
    return 0;
}
