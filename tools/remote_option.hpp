// The --remote options shared by `cudacore compile` and `cudacore cache`: the Redis program cache
// to use beside the disk cache, from the option or $CUDACORE_REMOTE_CACHE. The commands see the
// cache through RemoteCacheUse only, so that the CLI builds without the remote tier's library
// (CUDACORE_BUILD_REMOTE=OFF, or hiredis, OpenSSL or uriparser missing): remote_cache.cpp opens it
// with cudacore::remote, remote_cache_absent.cpp says the build has none.
#pragma once

#include "cudacore/program_cache.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace cudacore::cli {

// What the command line says about the remote cache.
struct RemoteArguments {
    std::string url;          // --remote
    std::string secret_file;  // --remote-secret-file
    std::string secret_env;   // --remote-secret-env
};

// Adds `--remote URL`, `--remote-secret-file FILE` and `--remote-secret-env NAME` to `command`.
void add_remote_option(CLI::App& command, RemoteArguments& remote);

// Whether a remote cache is named: by --remote, else by a non-empty $CUDACORE_REMOTE_CACHE.
bool remote_cache_named(const RemoteArguments& remote);

// An open remote cache, as the commands use it.
struct RemoteCacheUse {
    std::string url;                                // as messages show it (no password)
    std::string key_prefix;                         // the prefix of its keys on the server
    std::function<std::uint64_t()> server_entries;  // the server's count of the prefix's entries
    // The cache as a tier of the CLI's: a put it fails does not throw (its failures are printed
    // once per cause by the warning handler; thrown, compile_cached's on_cache_error would print
    // them again). clear() removes the prefix's entries.
    std::shared_ptr<ProgramCache> tier;
};

// The remote cache `remote` names (remote_cache_named), with the secret options replacing the
// URL's secret_file / secret_env; nullopt when none is named. InvalidArgumentError for a URL or a
// secret that cannot work, for secret options without a remote cache, and in a build without the
// remote tier for any cache named.
std::optional<RemoteCacheUse> open_remote_cache(const RemoteArguments& remote);

// The secret the remote cache's entries are sealed with: the one --remote-secret-file or
// --remote-secret-env names, else the URL's (secret_file= / secret_env=); empty when none is set.
// InvalidArgumentError as read_seal_secret gives it, and in a build without the remote tier for a
// URL that is named (its secret cannot be read without parsing it).
std::string remote_cache_secret(const RemoteArguments& remote);

// What a build with the remote tier does (remote_cache.cpp) and one without it refuses
// (remote_cache_absent.cpp), for a cache that remote_cache_named says is named: open it (the
// secret options replacing the URL's), and the secret its URL names (its secret_file= /
// secret_env=; "" when none).
RemoteCacheUse open_named_remote_cache(const RemoteArguments& remote);
std::string named_remote_url_secret(const RemoteArguments& remote);

}  // namespace cudacore::cli
