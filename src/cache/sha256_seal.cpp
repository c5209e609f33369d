#include "cache/sha256_seal.hpp"

#include "support/sha256.hpp"

namespace cudacore::detail {

std::string sha256_seal(std::string_view bytes, std::string_view secret) {
    const Sha256Digest seal = secret.empty() ? sha256(bytes) : hmac_sha256(secret, bytes);
    return std::string(reinterpret_cast<const char*>(seal.data()), seal.size());
}

}  // namespace cudacore::detail
