// RemoteProgramCache's entries: the key and the code sealed together, by SHA-256 (a checksum that
// catches damage and a value moved under another key) or by HMAC-SHA-256 under a secret (which a
// writer without the secret cannot forge).
#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"

#include "cache/sha256_seal.hpp"
#include "code/decode_cost.hpp"
#include "support/sha256.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cudacore {
namespace {

constexpr std::string_view magic = "ccremote";  // 8 bytes, no terminator stored
constexpr std::size_t seal_bytes = detail::sha256_seal_size;
constexpr std::size_t key_at = 9;  // after the magic and the seal kind
constexpr std::size_t payload_at = key_at + 32;
constexpr std::size_t smallest_entry = payload_at + seal_bytes;

enum SealKind : unsigned char { sealed_by_sha256 = 0, sealed_by_hmac = 1 };

}  // namespace

std::string RemoteProgramCache::encode_entry(const CacheKey& key, const ObjectCode& code,
                                             std::string_view secret) {
    std::string bytes(magic);
    bytes.push_back(static_cast<char>(secret.empty() ? sealed_by_sha256 : sealed_by_hmac));
    bytes.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    bytes += code.serialize();
    bytes += detail::sha256_seal(bytes, secret);
    return bytes;
}

ObjectCode RemoteProgramCache::decode_entry(std::string_view bytes, const CacheKey& expected,
                                            std::string_view secret) {
    auto bad = [&](const std::string& why) {
        return SerializationError("RemoteProgramCache: the entry of " + expected.hex() + " (" +
                                  std::to_string(bytes.size()) + " bytes) " + why);
    };
    if (bytes.size() < smallest_entry || bytes.substr(0, magic.size()) != magic)
        throw bad("is not a remote cache entry (no entry header)");
    const unsigned char kind = static_cast<unsigned char>(bytes[magic.size()]);
    if (kind != sealed_by_sha256 && kind != sealed_by_hmac) throw bad("has an unknown seal kind");
    if (!secret.empty() && kind != sealed_by_hmac)
        throw bad("is not authenticated (written without the secret): refused");
    if (secret.empty() && kind == sealed_by_hmac)
        throw bad("is authenticated with a secret this cache does not have (set secret_file or "
                  "secret_env as its writers do)");
    const std::string_view sealed = bytes.substr(0, bytes.size() - seal_bytes);
    const std::string expected_seal = detail::sha256_seal(sealed, secret);
    if (!detail::equal_in_constant_time(expected_seal.data(), bytes.data() + sealed.size(), seal_bytes)) {
        throw bad(secret.empty() ? "fails its checksum (damaged, or changed since it was written)"
                                 : "fails its authentication (written with another secret, or "
                                   "changed by someone without it)");
    }
    if (std::memcmp(bytes.data() + key_at, expected.digest.data(), 32) != 0)
        throw bad("holds the entry of another key");
    try {
        return ObjectCode::deserialize(sealed.substr(payload_at));
    } catch (const detail::DecodeCostExceeded& e) {
        throw detail::DecodeCostExceeded(bad(std::string("costs too much to decode: ") + e.what()).what());
    } catch (const SerializationError& e) {
        throw bad(std::string("holds no valid code: ") + e.what());
    }
}

}  // namespace cudacore
