#include "cache/sha256_seal.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace cudacore::detail {

std::string sha256_seal(std::string_view bytes, std::string_view secret) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    const bool made =
        secret.empty()
            ? EVP_Digest(bytes.data(), bytes.size(), out, &length, EVP_sha256(), nullptr) == 1
            : HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                   reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out,
                   &length) != nullptr;
    if (!made || length != sha256_seal_size) return {};
    return std::string(reinterpret_cast<const char*>(out), length);
}

}  // namespace cudacore::detail
