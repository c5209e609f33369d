// Reading a cache artefact that holds arbitrary bytes (a file shipped beside an application, which
// anyone who can write it can change): CacheArtefact::deserialize must refuse it with
// SerializationError, or return entries that serialize and read back to the same entries and
// origin; never crash or read out of bounds, nor allocate past its memory bound (scripts/fuzz.sh
// runs every fuzzer under -malloc_limit_mb, which fails any larger allocation). Random bytes
// almost never carry a valid SHA-256, so the first byte of an input picks how the rest is used:
//   0: as it is, read with and without a secret;
//   1: as the payload, compressed into one frame and sealed, its entry count the next byte: to
//      reach the reader of versions, keys, lengths and entries behind the checks;
//   2: the same, with the payload size the header states taken from the next 4 bytes: a frame
//      whose header and frame disagree with what it holds.
#include "cudacore/cache_artefact.hpp"
#include "cudacore/errors.hpp"

#include "cache/sha256_seal.hpp"

#include <zstd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

const std::string secret = "fuzzing-secret-of-32-bytes-long!";
// The entries of one input may take this much: far below scripts/fuzz.sh's allocation limit.
constexpr std::uint64_t max_memory = std::uint64_t{16} << 20;

void check(const std::string& bytes, const std::string& with) {
    std::optional<cudacore::CacheArtefact> read;
    try {
        read.emplace(cudacore::CacheArtefact::deserialize(bytes, with, max_memory));
    } catch (const cudacore::SerializationError&) {
        return;
    }
    const cudacore::CacheArtefact again =
        cudacore::CacheArtefact::deserialize(read->serialize(with), with, max_memory);
    if (again.entries() != read->entries()) std::abort();
    if (again.origin().nvrtc_version != read->origin().nvrtc_version ||
        again.origin().nvjitlink_version != read->origin().nvjitlink_version ||
        again.origin().cudacore_version != read->origin().cudacore_version)
        std::abort();
}

void put(std::string& out, std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// An unsigned artefact around `payload`: `count` entries, `stated` payload bytes.
std::string sealed(const std::string& payload, std::uint64_t count, std::uint64_t stated) {
    std::string frame(ZSTD_compressBound(payload.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), payload.data(), payload.size(), 1));
    std::string out = "\x89" "CCART\r\n";
    put(out, 1, 4);
    put(out, 0, 4);
    put(out, count, 8);
    put(out, stated, 8);
    put(out, frame.size(), 8);
    out += frame;
    out += cudacore::detail::sha256_seal(out, {});
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (data[0] % 3) {
        case 0:
            check(rest, "");
            check(rest, secret);
            break;
        case 1:
            if (rest.empty()) return 0;
            check(sealed(rest.substr(1), static_cast<unsigned char>(rest[0]), rest.size() - 1), "");
            break;
        default: {
            if (rest.size() < 5) return 0;
            std::uint64_t stated = 0;
            for (int i = 0; i < 4; ++i) stated |= std::uint64_t{static_cast<unsigned char>(rest[1 + i])} << (8 * i);
            check(sealed(rest.substr(5), static_cast<unsigned char>(rest[0]), stated), "");
            break;
        }
    }
    return 0;
}
