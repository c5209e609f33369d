// The secret of an HMAC seal (sha256_seal.hpp), read from where its owner's options name it: a
// file, or an environment variable. The remote tier's secret (RemoteCacheOptions::read_secret)
// and the CLI's artefact secret (--secret-file, --secret-env) are read here.
#pragma once

#include <string>

namespace cudacore::detail {

// Where a secret is, and how its owner names the two places in messages.
struct SealSecretSource {
    std::string owner{};        // begins every message: "RemoteProgramCache(redis://host:6379)"
    std::string file{};         // the file that holds the secret, or empty
    std::string file_option{};  // the option that named it: "secret_file", "--secret-file"
    std::string env{};          // the environment variable that holds it, or empty
    std::string env_option{};   // the option that named it
};

// The secret, trimmed of trailing white space; empty when neither place is named. The file is read
// with the rules of every file read from outside (a regular file, opened without blocking, of at
// most 4096 bytes); one that users other than its owner can read or change is used and warned about
// (WarningKind::secret_file_exposed), as ssh does for keys. InvalidArgumentError, beginning with the
// owner and naming the option: both places named, a file that cannot be read, an unset or empty
// variable, a secret under shortest_seal_secret bytes. Thread-safe.
std::string read_seal_secret(const SealSecretSource& source);

}  // namespace cudacore::detail
