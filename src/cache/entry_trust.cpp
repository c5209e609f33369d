#include "cache/entry_trust.hpp"

#include "cache/sha256_seal.hpp"

namespace cudacore::detail {
namespace {
constexpr std::string_view authenticated_trust = "redis sealed by HMAC-SHA-256 under ";
}  // namespace

bool trust_holds_secret(std::string_view trust) noexcept {
    return trust.find(authenticated_trust) != std::string_view::npos;
}

std::string entry_trust(std::string_view secret) {
    if (secret.empty()) return "redis sealed by SHA-256";
    const std::string fingerprint = sha256_seal("cudacore remote entry trust", secret);
    static constexpr char digits[] = "0123456789abcdef";
    std::string text(authenticated_trust);
    for (std::size_t i = 0; i < 16; ++i) {
        text += digits[static_cast<unsigned char>(fingerprint[i]) >> 4];
        text += digits[static_cast<unsigned char>(fingerprint[i]) & 15];
    }
    return text;
}

}  // namespace cudacore::detail
