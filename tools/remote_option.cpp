// The --remote options and what every build of the CLI reads from them (remote_option.hpp).
#include "remote_option.hpp"

#include "cudacore/errors.hpp"

#include "cache/seal_secret.hpp"

#include <cstdlib>

namespace cudacore::cli {

void add_remote_option(CLI::App& command, RemoteArguments& remote) {
    command.add_option("--remote", remote.url,
                       "Also use the Redis program cache at this URL "
                       "(redis[s]://[user:password@]host[:port][/db][?tls_ca=FILE...]; default: $CUDACORE_REMOTE_CACHE)");
    auto* file = command.add_option(
        "--remote-secret-file", remote.secret_file,
        "Authenticate the remote cache's entries (HMAC-SHA-256) with the secret in this file: "
        "entries without a valid tag are misses (the URL's secret_file=)");
    auto* env = command.add_option(
        "--remote-secret-env", remote.secret_env,
        "As --remote-secret-file, the secret read from this environment variable (secret_env=)");
    file->excludes(env);
}

bool remote_cache_named(const RemoteArguments& remote) {
    if (!remote.url.empty()) return true;
    const char* url = std::getenv("CUDACORE_REMOTE_CACHE");
    return url != nullptr && *url != '\0';
}

std::optional<RemoteCacheUse> open_remote_cache(const RemoteArguments& remote) {
    if (remote_cache_named(remote)) return open_named_remote_cache(remote);
    if (!remote.secret_file.empty() || !remote.secret_env.empty())
        throw InvalidArgumentError("--remote-secret-file and --remote-secret-env need a remote "
                                   "cache (--remote or $CUDACORE_REMOTE_CACHE)");
    return std::nullopt;
}

std::string remote_cache_secret(const RemoteArguments& remote) {
    if (remote.secret_file.empty() && remote.secret_env.empty())
        return remote_cache_named(remote) ? named_remote_url_secret(remote) : std::string();
    return detail::read_seal_secret({.owner = "the remote cache's secret",
                                     .file = remote.secret_file,
                                     .file_option = "--remote-secret-file",
                                     .env = remote.secret_env,
                                     .env_option = "--remote-secret-env"});
}

}  // namespace cudacore::cli
