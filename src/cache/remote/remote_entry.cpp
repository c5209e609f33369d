// RemoteProgramCache's entries: the key and the code sealed together, by SHA-256 (a checksum that
// catches damage and a value moved under another key) or by HMAC-SHA-256 under a secret (which a
// writer without the secret cannot forge).
#include "cache/remote/remote_entry.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "cache/disk/disk_files.hpp"
#include "cache/sha256_seal.hpp"
#include "code/decode_cost.hpp"
#include "support/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

namespace cudacore {
namespace {

constexpr std::string_view magic = "ccremote";  // 8 bytes, no terminator stored
constexpr std::size_t seal_bytes = detail::sha256_seal_size;
constexpr std::size_t key_at = 9;  // after the magic and the seal kind
constexpr std::size_t payload_at = key_at + 32;
constexpr std::size_t smallest_entry = payload_at + seal_bytes;
constexpr std::uint64_t largest_secret_file = 4096;  // a secret is tens of bytes

enum SealKind : unsigned char { sealed_by_sha256 = 0, sealed_by_hmac = 1 };

// The seal of `sealed`: HMAC-SHA-256 under `secret`, or SHA-256 when it is empty.
std::string entry_seal(std::string_view sealed, std::string_view secret) {
    std::string made = detail::sha256_seal(sealed, secret);
    if (made.empty()) throw std::runtime_error("RemoteProgramCache: OpenSSL's SHA-256 failed");
    return made;
}

std::string trimmed(std::string text) {
    while (!text.empty() && std::strchr(" \t\r\n", text.back()) != nullptr) text.pop_back();
    return text;
}

// The bytes of the secret file `path` (`source` names it and its option in messages), with the
// rules of every file read from outside: a regular file only (opened without blocking, so a FIFO
// never hangs the read), no larger than largest_secret_file, read through the descriptor that was
// checked. Others' access to it is warned about, as ssh does for keys. Throws what `fail` makes.
template <class Fail>
std::string read_secret_file(const std::string& path, const std::string& source, Fail&& fail) {
    const detail::disk::FileDescriptor file(
        ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    struct stat info {};
    if (file.fd < 0 || ::fstat(file.fd, &info) != 0) {
        const int error = errno;
        throw fail("cannot read " + source + ": " + std::strerror(error));
    }
    if (!S_ISREG(info.st_mode)) {
        throw fail(source + " is " + std::string(detail::file_kind(info.st_mode)) +
                   ", not a regular file");
    }
    if ((info.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
        warn(WarningKind::secret_file_exposed,
             "RemoteProgramCache: " + source + " has mode " + mode +
                 ": users other than its owner can read or change the secret (chmod 600 it)");
    }
    try {
        return detail::read_open_file_bounded(file.fd, path, largest_secret_file);
    } catch (const std::length_error&) {
        throw fail(source + " holds " + std::to_string(info.st_size) +
                   " bytes; a secret file holds at most " + std::to_string(largest_secret_file));
    } catch (const std::system_error& e) {
        throw fail("cannot read " + source + ": " + e.what());
    }
}

}  // namespace

std::string RemoteProgramCache::encode_entry(const CacheKey& key, const ObjectCode& code,
                                             std::string_view secret) {
    std::string bytes(magic);
    bytes.push_back(static_cast<char>(secret.empty() ? sealed_by_sha256 : sealed_by_hmac));
    bytes.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    bytes += code.serialize();
    bytes += entry_seal(bytes, secret);
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
    const std::string expected_seal = entry_seal(sealed, secret);
    if (CRYPTO_memcmp(expected_seal.data(), bytes.data() + sealed.size(), seal_bytes) != 0) {
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

std::string RemoteCacheOptions::read_secret() const { return detail::read_entry_secret(*this); }

namespace detail {

std::string read_entry_secret(const RemoteCacheOptions& options) {
    auto fail = [&](const std::string& why) {
        return InvalidArgumentError("RemoteProgramCache(" + options.display_url() + "): " + why);
    };
    if (!options.secret_file.empty() && !options.secret_env.empty())
        throw fail("set secret_file or secret_env, not both");
    std::string secret;
    std::string source;
    if (!options.secret_file.empty()) {
        source = "the secret file '" + options.secret_file + "' (secret_file)";
        secret = read_secret_file(options.secret_file, source, fail);
    } else if (!options.secret_env.empty()) {
        source = "the environment variable " + options.secret_env + " (secret_env)";
        const char* value = std::getenv(options.secret_env.c_str());
        if (value == nullptr || *value == '\0') throw fail(source + " is unset or empty");
        secret = value;
    } else {
        return {};
    }
    secret = trimmed(std::move(secret));
    if (secret.size() < detail::shortest_seal_secret) {
        throw fail(source + " holds " + std::to_string(secret.size()) +
                   " bytes; a secret needs at least " + std::to_string(detail::shortest_seal_secret) +
                   " (e.g. `openssl rand -hex 32`)");
    }
    return secret;
}

}  // namespace detail
}  // namespace cudacore
