// The remote cache of the --remote options in a CLI built without the remote tier
// (CUDACORE_BUILD_REMOTE=OFF, or hiredis, OpenSSL or uriparser missing): a cache that is named
// is refused, saying why, rather than passed over (remote_option.hpp).
#include "remote_option.hpp"

#include "cudacore/errors.hpp"

namespace cudacore::cli {
namespace {

[[noreturn]] void refuse(const RemoteArguments& remote) {
    throw InvalidArgumentError(
        std::string(remote.url.empty() ? "$CUDACORE_REMOTE_CACHE" : "--remote") +
        " names a remote cache, but this cudacore was built without its remote tier "
        "(cudacore::remote: CUDACORE_BUILD_REMOTE was off, or hiredis, OpenSSL or uriparser "
        "was not found); unset it, or use a cudacore built with the tier");
}

}  // namespace

RemoteCacheUse open_named_remote_cache(const RemoteArguments& remote) { refuse(remote); }

std::string named_remote_url_secret(const RemoteArguments& remote) { refuse(remote); }

}  // namespace cudacore::cli
