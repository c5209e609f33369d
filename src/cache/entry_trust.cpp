#include "cache/entry_trust.hpp"

#include "support/hex.hpp"
#include "support/sha256.hpp"

namespace cudacore::detail {
namespace {
constexpr std::string_view authenticated_trust = "redis sealed by HMAC-SHA-256 under ";
}  // namespace

bool trust_holds_secret(std::string_view trust) noexcept {
    return trust.find(authenticated_trust) != std::string_view::npos;
}

std::string entry_trust(std::string_view secret) {
    if (secret.empty()) return "redis sealed by SHA-256";
    // The first 16 bytes of the secret's HMAC seal of a fixed text: names the secret, reveals nothing.
    const Sha256Digest fingerprint = hmac_sha256(secret, "cudacore remote entry trust");
    return std::string(authenticated_trust) + hex_of(fingerprint.data(), 16);
}

}  // namespace cudacore::detail
