#include "remote_option.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include <iostream>

namespace cudacore::cli {

void add_remote_option(CLI::App& command, std::string& url) {
    command.add_option("--remote", url,
                       "Also use the Redis program cache at this URL "
                       "(redis[s]://[user:password@]host[:port][/db][?tls_ca=FILE...]; default: $CUDACORE_REMOTE_CACHE)");
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
