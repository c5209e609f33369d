// The --remote option shared by `cudacore compile` and `cudacore cache`: the Redis program cache
// to use beside the disk cache, from the option or $CUDACORE_REMOTE_CACHE.
#pragma once

#include "cudacore/remote_program_cache.hpp"

#include <CLI/CLI.hpp>

#include <memory>
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

// The remote cache named by `remote.url`, else by $CUDACORE_REMOTE_CACHE; nullptr when neither is
// set. The secret options replace the URL's secret_file / secret_env. Throws InvalidArgumentError
// for a URL or a secret that cannot work. Its failures are printed to stderr as warnings, once per
// cause (the library's warning handler), while the CLI runs.
std::unique_ptr<RemoteProgramCache> open_remote_cache(const RemoteArguments& remote);

// `remote` as a tier of the CLI's cache: the same cache, except that a put it fails does not
// throw. Its failures are already printed, once per cause, by the warning handler that
// open_remote_cache installs; thrown, they would be printed a second time by compile_cached's
// on_cache_error.
std::shared_ptr<ProgramCache> remote_tier(std::shared_ptr<RemoteProgramCache> remote);

}  // namespace cudacore::cli
