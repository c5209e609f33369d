// Reading a remote cache value that holds arbitrary bytes (what anyone who can write to the Redis
// server can store): RemoteProgramCache::decode_entry must refuse it with SerializationError, or
// return code whose entry, encoded again, is exactly the bytes read; never crash or read out of
// bounds. Each input is decoded with and without a secret, against the key it names and another.
#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

const std::string secret = "fuzzing-secret-of-32-bytes-long!";
const cudacore::CacheKey other_key = cudacore::CacheKey::of_bytes("fuzzed entry");

void check(const std::string& bytes, const cudacore::CacheKey& key, const std::string& with) {
    std::optional<cudacore::ObjectCode> decoded;
    try {
        decoded = cudacore::RemoteProgramCache::decode_entry(bytes, key, with);
    } catch (const cudacore::SerializationError&) {
        return;
    }
    if (cudacore::RemoteProgramCache::encode_entry(key, *decoded, with) != bytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // The key the value names (bytes 9..40), so that inputs get past the key check.
    cudacore::CacheKey named = other_key;
    if (size >= 41) std::copy(data + 9, data + 41, named.digest.begin());
    for (const cudacore::CacheKey& key : {named, other_key}) {
        check(bytes, key, "");
        check(bytes, key, secret);
    }
    return 0;
}
