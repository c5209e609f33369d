// ObjectCode::deserialize on arbitrary bytes: it must either return an ObjectCode whose
// serialization is the input itself, or throw SerializationError; never crash or read out of
// bounds. Random bytes almost never carry a valid checksum, so half of the inputs get a correct
// total size and checksum written over them first, to reach the parser behind the checksum.
#include "cudacore/errors.hpp"
#include "cudacore/object_code.hpp"

#include <xxhash.h>  // inlined: XXH_INLINE_ALL comes with cudacore_internals

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

void check(const std::string& bytes) {
    try {
        const cudacore::ObjectCode code = cudacore::ObjectCode::deserialize(bytes);
        if (code.serialize() != bytes) std::abort();  // accepted input must round-trip exactly
        if (cudacore::ObjectCode::deserialize(code.serialize()) != code) std::abort();
    } catch (const cudacore::SerializationError&) {
    }
}

void put_u64(std::string& bytes, std::size_t offset, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // The first byte chooses: the input as it is, or resealed with a valid size and checksum.
    std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) != 0 && bytes.size() >= 32) {
        put_u64(bytes, 16, bytes.size());
        put_u64(bytes, bytes.size() - 8, XXH3_64bits(bytes.data(), bytes.size() - 8));
    }
    check(bytes);
    return 0;
}
