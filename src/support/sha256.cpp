#include "support/sha256.hpp"

#include <nettle/hmac.h>

namespace cudacore::detail {

Sha256Digest sha256(std::string_view bytes) noexcept {
    Sha256 hash;
    hash.update(bytes);
    return hash.finish();
}

Sha256Digest hmac_sha256(std::string_view key, std::string_view bytes) noexcept {
    hmac_sha256_ctx context;
    hmac_sha256_set_key(&context, key.size(), reinterpret_cast<const std::uint8_t*>(key.data()));
    hmac_sha256_update(&context, bytes.size(), reinterpret_cast<const std::uint8_t*>(bytes.data()));
    Sha256Digest digest;
    hmac_sha256_digest(&context, digest.size(), digest.data());
    return digest;
}

}  // namespace cudacore::detail
