#include "remote_option.hpp"

#include "cudacore/warnings.hpp"

#include <iostream>

namespace cudacore::cli {

void add_remote_option(CLI::App& command, std::string& url) {
    command.add_option("--remote", url,
                       "Also use the Redis program cache at this URL "
                       "(redis://[user:password@]host[:port][/db]; default: $CUDACORE_REMOTE_CACHE)");
}

std::unique_ptr<RemoteProgramCache> open_remote_cache(const std::string& url) {
    std::optional<RemoteCacheOptions> options =
        url.empty() ? RemoteCacheOptions::from_environment()
                    : std::optional<RemoteCacheOptions>(RemoteCacheOptions::from_url(url));
    if (!options) return nullptr;
    set_warning_handler([](const Warning& warning) {
        if (warning.kind == WarningKind::remote_cache_failed)
            std::cerr << "cudacore: warning: " << warning.message << "\n";
    });
    return std::make_unique<RemoteProgramCache>(std::move(*options));
}

}  // namespace cudacore::cli
