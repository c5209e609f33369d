// Reading a cache artefact that holds arbitrary bytes (a file shipped beside an application, which
// anyone who can write it can change): CacheArtefact::deserialize must refuse it with
// SerializationError, or return entries that serialize and read back to the same entries and
// origin; never crash or read out of bounds, nor allocate past its memory bound (scripts/fuzz.sh
// runs every fuzzer under -malloc_limit_mb, which fails any larger allocation). Each input is
// read with and without a secret, within max_memory.
#include "cudacore/cache_artefact.hpp"
#include "cudacore/errors.hpp"

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    check(bytes, "");
    check(bytes, secret);
    return 0;
}
