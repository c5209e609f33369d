#include "remote_option.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include <iostream>

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

std::unique_ptr<RemoteProgramCache> open_remote_cache(const RemoteArguments& remote) {
    std::optional<RemoteCacheOptions> options =
        remote.url.empty() ? RemoteCacheOptions::from_environment()
                           : std::optional<RemoteCacheOptions>(RemoteCacheOptions::from_url(remote.url));
    if (!options) {
        if (!remote.secret_file.empty() || !remote.secret_env.empty())
            throw InvalidArgumentError("--remote-secret-file and --remote-secret-env need a remote "
                                       "cache (--remote or $CUDACORE_REMOTE_CACHE)");
        return nullptr;
    }
    if (!remote.secret_file.empty() || !remote.secret_env.empty()) {
        options->secret_file = remote.secret_file;
        options->secret_env = remote.secret_env;
    }
    return std::make_unique<RemoteProgramCache>(std::move(*options));
}

namespace {

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

std::shared_ptr<ProgramCache> remote_tier(std::shared_ptr<RemoteProgramCache> remote) {
    return std::make_shared<RemoteTier>(std::move(remote));
}

}  // namespace cudacore::cli
