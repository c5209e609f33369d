// SHA-256 and HMAC-SHA-256 of everything cudacore hashes or seals: cache keys, compile
// snapshots, header bundles, the seals of cache entries and artefacts. From Nettle rather than
// OpenSSL's EVP calls, whose first digest in a process sets up OpenSSL's providers and reads its
// configuration file (about 1.3 ms, which every cache hit in a fresh process paid). Nothing here
// fails, throws or allocates; no state is shared (thread-safe).
#pragma once

#include <nettle/memops.h>
#include <nettle/sha2.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudacore::detail {

using Sha256Digest = std::array<unsigned char, 32>;

// One SHA-256, fed piece by piece.
class Sha256 {
public:
    Sha256() noexcept { sha256_init(&context_); }
    void update(const void* data, std::size_t size) noexcept {
        sha256_update(&context_, size, static_cast<const std::uint8_t*>(data));
    }
    void update(std::string_view bytes) noexcept { update(bytes.data(), bytes.size()); }
    // The digest of everything given; the object then starts over.
    Sha256Digest finish() noexcept {
        Sha256Digest digest;
        sha256_digest(&context_, digest.size(), digest.data());
        return digest;
    }

private:
    sha256_ctx context_;
};

// SHA-256 of `bytes`.
Sha256Digest sha256(std::string_view bytes) noexcept;
// HMAC-SHA-256 of `bytes` under `key`.
Sha256Digest hmac_sha256(std::string_view key, std::string_view bytes) noexcept;
// Whether the `size` bytes at `a` and `b` are equal, in a time that does not depend on where they
// differ (a seal compared with the one expected tells a forger nothing).
inline bool equal_in_constant_time(const void* a, const void* b, std::size_t size) noexcept {
    return memeql_sec(a, b, size) != 0;
}

}  // namespace cudacore::detail
