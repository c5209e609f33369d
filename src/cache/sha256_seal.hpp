// The seal cudacore puts on what it stores or ships (remote cache entries, cache artefacts):
// SHA-256 of the bytes, a checksum that catches damage, or HMAC-SHA-256 under a secret, which a
// writer without the secret cannot forge.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cudacore::detail {

inline constexpr std::size_t sha256_seal_size = 32;
// The shortest secret an HMAC seal is made with: 16 bytes (128 bits).
inline constexpr std::size_t shortest_seal_secret = 16;

// The sha256_seal_size-byte seal of `bytes`: HMAC-SHA-256 under `secret`, SHA-256 when it is
// empty. Thread-safe.
std::string sha256_seal(std::string_view bytes, std::string_view secret);

}  // namespace cudacore::detail
