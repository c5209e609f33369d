// The remote cache of the --remote options, opened with the remote tier's library
// (cudacore::remote): the CLI built with it (remote_option.hpp).
#include "remote_option.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"

namespace cudacore::cli {
namespace {

// The options of the cache the arguments name (remote_cache_named holds): --remote's URL, else
// $CUDACORE_REMOTE_CACHE's.
RemoteCacheOptions named_options(const RemoteArguments& remote) {
    return remote.url.empty() ? RemoteCacheOptions::from_environment().value()
                              : RemoteCacheOptions::from_url(remote.url);
}

// The cache as a tier whose failed puts do not throw (remote_option.hpp says why).
class RemoteTier final : public ProgramCache {
public:
    explicit RemoteTier(std::shared_ptr<RemoteProgramCache> remote) : remote_(std::move(remote)) {}
    std::optional<ObjectCode> get(const CacheKey& key) override { return remote_->get(key); }
    void put(const CacheKey& key, const ObjectCode& code) override {
        try {
            remote_->put(key, code);
        } catch (const CacheError&) {
            // Counted by the cache and printed by the warning handler: not reported again.
        }
    }
    CacheStats stats() const override { return remote_->stats(); }
    std::string entry_trust() const override { return remote_->entry_trust(); }
    void clear() override { remote_->clear(); }
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override {
        return remote_->await_compile_turn(key, find);
    }

private:
    std::shared_ptr<RemoteProgramCache> remote_;
};

}  // namespace

RemoteCacheUse open_named_remote_cache(const RemoteArguments& remote) {
    RemoteCacheOptions options = named_options(remote);
    if (!remote.secret_file.empty() || !remote.secret_env.empty()) {
        options.secret_file = remote.secret_file;
        options.secret_env = remote.secret_env;
    }
    auto cache = std::make_shared<RemoteProgramCache>(std::move(options));
    return RemoteCacheUse{.url = cache->options().display_url(),
                          .key_prefix = cache->options().key_prefix,
                          .server_entries = [cache] { return cache->server_entries(); },
                          .tier = std::make_shared<RemoteTier>(cache)};
}

std::string named_remote_url_secret(const RemoteArguments& remote) {
    return named_options(remote).read_secret();
}

}  // namespace cudacore::cli
