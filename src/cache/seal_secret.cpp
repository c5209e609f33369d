// read_seal_secret: the secret of an HMAC seal from the file or the environment variable its
// owner's options name, with the rules of every file read from outside.
#include "cache/seal_secret.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/sha256_seal.hpp"
#include "support/input_file.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace cudacore::detail {
namespace {

constexpr std::uint64_t largest_secret_file = 4096;  // a secret is tens of bytes

std::string trimmed(std::string text) {
    while (!text.empty() && std::strchr(" \t\r\n", text.back()) != nullptr) text.pop_back();
    return text;
}

// The bytes of the secret file `path` (`source` names it and its option in messages), with the
// rules of every file read from outside: a regular file only (opened without blocking, so a FIFO
// never hangs the read), no larger than largest_secret_file, read through the descriptor that was
// checked. Others' access to it is warned about, as ssh does for keys. Throws what `fail` makes.
template <class Fail>
std::string read_secret_file(const std::string& path, const std::string& source,
                             const std::string& owner, Fail&& fail) {
    const OpenedInputFile opened = open_input_file(path);
    if (!opened.refused.empty()) throw fail("cannot read " + source + ": " + opened.refused);
    if ((opened.mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(opened.mode & 07777));
        warn(WarningKind::secret_file_exposed,
             owner + ": " + source + " has mode " + mode +
                 ": users other than its owner can read or change the secret (chmod 600 it)");
    }
    try {
        return read_open_file_bounded(opened.file.fd, path, largest_secret_file);
    } catch (const std::length_error&) {
        throw fail(source + " holds " + std::to_string(opened.size) +
                   " bytes; a secret file holds at most " + std::to_string(largest_secret_file));
    } catch (const std::system_error& e) {
        throw fail("cannot read " + source + ": " + e.what());
    }
}

}  // namespace

std::string read_seal_secret(const SealSecretSource& where) {
    auto fail = [&where](const std::string& why) { return InvalidArgumentError(where.owner + ": " + why); };
    if (!where.file.empty() && !where.env.empty())
        throw fail("set " + where.file_option + " or " + where.env_option + ", not both");
    std::string secret;
    std::string source;
    if (!where.file.empty()) {
        source = "the secret file '" + where.file + "' (" + where.file_option + ")";
        secret = read_secret_file(where.file, source, where.owner, fail);
    } else if (!where.env.empty()) {
        source = "the environment variable " + where.env + " (" + where.env_option + ")";
        const char* value = std::getenv(where.env.c_str());
        if (value == nullptr || *value == '\0') throw fail(source + " is unset or empty");
        secret = value;
    } else {
        return {};
    }
    secret = trimmed(std::move(secret));
    if (secret.size() < shortest_seal_secret) {
        throw fail(source + " holds " + std::to_string(secret.size()) +
                   " bytes; a secret needs at least " + std::to_string(shortest_seal_secret) +
                   " (e.g. `openssl rand -hex 32`)");
    }
    return secret;
}

}  // namespace cudacore::detail
