#include "cudacore/remote_program_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <string_view>

#include "cache/entry_trust.hpp"
#include "remote/remote_cache_state.hpp"
#include "code/decode_cost.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"
#include "support/cudacore_trace.hpp"

namespace cudacore {

using detail::RedisFailure;
using detail::RedisReply;
using detail::RedisReplyType;

namespace detail {
constinit CacheTier remote_tier{"remote"};
}  // namespace detail

namespace {

void check(const RemoteCacheOptions& options) {
    auto fail = [&](const std::string& why) {
        return InvalidArgumentError("RemoteProgramCache(" + options.display_url() + "): " + why);
    };
    if (options.host.empty()) throw fail("no host");
    if (options.port < 1 || options.port > 65535)
        throw fail("port " + std::to_string(options.port) + " is outside 1..65535");
    if (options.database < 0) throw fail("negative database " + std::to_string(options.database));
    if (options.key_prefix.empty() ||
        options.key_prefix.find_first_of("*?[]\\ \t\r\n") != std::string::npos) {
        throw fail("key prefix '" + options.key_prefix +
                   "' is empty or holds a pattern character or a space");
    }
    if (options.connect_timeout.count() <= 0 || options.operation_timeout.count() <= 0 ||
        options.retry_after.count() <= 0 || options.max_retry_after < options.retry_after) {
        throw fail("timeouts and retry delays must be positive (max_retry_after >= retry_after)");
    }
    if (!options.user.empty() && options.password.empty()) throw fail("a user needs a password");
    if (options.lock_expiry.count() < 0 || options.lock_wait.count() < 0)
        throw fail("lock_expiry and lock_wait must not be negative");
    if (!options.tls && (!options.tls_ca_file.empty() || !options.tls_cert_file.empty() ||
                         !options.tls_key_file.empty()))
        throw fail("TLS files are set but tls is off (a rediss:// URL sets it)");
    if (!options.tls_key_file.empty() && options.tls_cert_file.empty())
        throw fail("tls_key_file '" + options.tls_key_file + "' without tls_cert_file");
}

}  // namespace

RemoteProgramCache::State::State(RemoteCacheOptions options_)
    : options(std::move(options_)),
      secret(options.read_secret()),
      trust(detail::entry_trust(secret)) {
    key_stem = options.key_prefix + ":v" +
               std::to_string(ObjectCode::serialization_format_version) + "." +
               std::to_string(entry_format) + ":";
}

void RemoteProgramCache::State::refused_for_cost(const std::string& name, const std::string& why,
                                                 bool probing) {
    ++corrupt;
    backoff.failed(probing);
    reports.report("decode cost", "",
                   "GET " + name + ": " + why + " (get() is a miss; retrying after a back-off)");
    detail::remote_tier.count(detail::TierEvent::failure);
    ++misses;
}

RedisReply RemoteProgramCache::State::run_or_throw(const std::vector<std::string_view>& arguments,
                                                   const char* what) {
    RedisReply reply;
    try {
        reply = pool.run(arguments);
    } catch (const RedisFailure& failure) {
        backoff.failed(false);
        throw CacheError(std::string("RemoteProgramCache::") + what + ": " + failure.what());
    }
    const bool refused = detail::reply_type(*reply) == RedisReplyType::error;
    answered(arguments[0], !refused);
    if (refused) {
        ++server_errors;
        throw CacheError(std::string("RemoteProgramCache::") + what + ": " +
                         std::string(arguments[0]) + " on " + options.display_url() +
                         " refused: " + std::string(detail::reply_text(*reply)));
    }
    return reply;
}

bool RemoteProgramCache::State::holds_value(const RedisReply& reply, const std::string& name) {
    answered("GET", detail::reply_type(*reply) != RedisReplyType::error);
    switch (detail::reply_type(*reply)) {
        case RedisReplyType::nil:
            ++misses;
            return false;
        case RedisReplyType::string:
            return true;
        case RedisReplyType::error: {
            ++misses;
            const std::string text(detail::reply_text(*reply));
            if (text.starts_with("WRONGTYPE")) {  // something else (a list...) under our key
                ++corrupt;
                warn(WarningKind::remote_cache_failed, "RemoteProgramCache: GET " + name + " on " +
                                                           options.display_url() +
                                                           ": the key holds a value of another Redis type (a miss)");
                return false;
            }
            ++server_errors;
            detail::remote_tier.count(detail::TierEvent::failure);
            reports.report(
                "GET " + text.substr(0, text.find(' ')), "GET",
                "GET " + name + " on " + options.display_url() + " refused: " + text + " (a miss)");
            return false;
        }
        default:  // another type stored under our key: not an entry
            ++corrupt;
            ++misses;
            warn(WarningKind::remote_cache_failed, "RemoteProgramCache: GET " + name + " on " + options.display_url() +
                                                       ": the reply is not a string value (a miss)");
            return false;
    }
}

namespace {

// Whether `name` is an entry's Redis name under `prefix`, of any format: "<prefix>:v<digits>
// (.<digits>)*:<64 hex digits>". SCAN's pattern is coarser ('*' matches ':' too), so that a prefix
// that begins another ("team" and "team:v2") or another key of the prefix's would match.
bool is_entry_name(std::string_view name, std::string_view prefix) {
    if (!name.starts_with(prefix) || !name.substr(prefix.size()).starts_with(":v")) return false;
    std::string_view rest = name.substr(prefix.size() + 2);
    const std::size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    const std::string_view version = rest.substr(0, colon);
    if (version.front() == '.' || version.back() == '.' || version.find("..") != std::string_view::npos ||
        version.find_first_not_of("0123456789.") != std::string_view::npos)
        return false;
    const std::string_view hex = rest.substr(colon + 1);
    return hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

void RemoteProgramCache::State::scan(
    const char* what, const std::function<void(const std::vector<std::string_view>&)>& each) {
    const std::string pattern = options.key_prefix + ":v[0-9]*:*";
    auto unexpected = [&](const std::string& reply) {
        return CacheError(std::string("RemoteProgramCache::") + what + ": " + reply + " on " + options.display_url() +
                          " gave an unexpected reply");
    };
    // Replies are read within the bound of an entry's value (max_entry_bytes and some framing):
    // a call asks for as many keys as about fit (a key costs about 512 bytes read and parsed).
    const std::uint64_t count = std::clamp<std::uint64_t>((options.max_entry_bytes + (64 << 10)) / 512, 10, 1000);
    const std::string count_text = std::to_string(count);
    // A full iteration visits each of the database's hash buckets once, COUNT a call at least: a
    // server that never ends it (or is not Redis) is given up on, not followed forever.
    RedisReply size = run_or_throw({"DBSIZE"}, what);
    if (detail::reply_type(*size) != RedisReplyType::integer || detail::reply_integer(*size) < 0)
        throw unexpected("DBSIZE");
    const auto keys_held = static_cast<std::uint64_t>(detail::reply_integer(*size));
    const std::uint64_t most_calls = 64 + 4 * (std::min<std::uint64_t>(keys_held, std::uint64_t{1} << 40) / count + 1);
    std::string cursor = "0";
    std::uint64_t calls = 0;
    do {
        if (++calls > most_calls) {
            throw CacheError(std::string("RemoteProgramCache::") + what + ": SCAN on " + options.display_url() +
                             " did not end after " + std::to_string(most_calls) + " calls, for " +
                             std::to_string(keys_held) + " keys (DBSIZE): given up");
        }
        RedisReply reply = run_or_throw({"SCAN", cursor, "MATCH", pattern, "COUNT", count_text}, what);
        if (detail::reply_type(*reply) != RedisReplyType::array || detail::reply_elements(*reply) != 2)
            throw unexpected("SCAN");
        const redisReply& next = detail::reply_element(*reply, 0);
        cursor = std::string(detail::reply_text(next));
        if (detail::reply_type(next) != RedisReplyType::string || cursor.empty() ||
            cursor.find_first_not_of("0123456789") != std::string::npos)
            throw unexpected("SCAN (its cursor)");
        const auto& keys = detail::reply_element(*reply, 1);
        if (detail::reply_type(keys) != RedisReplyType::array) throw unexpected("SCAN (its keys)");
        std::vector<std::string_view> names;
        for (std::size_t i = 0; i < detail::reply_elements(keys); ++i) {
            const redisReply& key = detail::reply_element(keys, i);
            if (detail::reply_type(key) == RedisReplyType::string && is_entry_name(detail::reply_text(key), options.key_prefix))
                names.push_back(detail::reply_text(key));
        }
        if (!names.empty()) each(names);
    } while (cursor != "0");
}

RemoteProgramCache::RemoteProgramCache(RemoteCacheOptions options) {
    check(options);
    state_ = std::make_unique<State>(std::move(options));
}

RemoteProgramCache::~RemoteProgramCache() = default;

const RemoteCacheOptions& RemoteProgramCache::options() const noexcept { return state_->options; }

bool RemoteProgramCache::authenticated() const noexcept { return !state_->secret.empty(); }

std::string RemoteProgramCache::entry_trust() const { return state_->trust; }

std::string RemoteProgramCache::redis_key(const CacheKey& key) const {
    return state_->key_stem + key.hex();
}

std::optional<ObjectCode> RemoteProgramCache::get(const CacheKey& key) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get remote");
    State& state = *state_;
    bool probing = false;
    if (!state.backoff.may_try(probing)) {
        ++state.skipped;
        ++state.misses;
        return std::nullopt;
    }
    const std::string name = redis_key(key);
    // A value this cache refuses: a miss, counted and warned about with the key and the cause.
    auto refused = [&](const std::string& why) -> std::optional<ObjectCode> {
        ++state.corrupt;
        ++state.misses;
        warn(WarningKind::remote_cache_failed, "RemoteProgramCache: GET " + name + " on " +
                                                   state.options.display_url() + ": " + why +
                                                   " (a miss; the next put replaces it)");
        return std::nullopt;
    };
    RedisReply reply;
    try {
        reply = state.pool.run({"GET", name});
    } catch (const RedisFailure& failure) {
        // A reply refused for its size is a failure like any other: what it would cost comes
        // once per back-off, not at every lookup. It is the value under the key (counted
        // corrupt), or a server that does not speak for its keys.
        const bool too_large = failure.kind == RedisFailure::Kind::too_large;
        if (too_large) ++state.corrupt;
        state.backoff.failed(probing);
        state.reports.report(failure.cause, "",
                             (too_large ? "the value of " + name + ": " : std::string()) +
                                 failure.what() + " (get() is a miss; retrying after a back-off)");
        detail::remote_tier.count(detail::TierEvent::failure);
        ++state.misses;
        return std::nullopt;
    } catch (const std::bad_alloc&) {
        ++state.misses;  // no memory for the value now: a miss
        return std::nullopt;
    }
    if (!state.holds_value(reply, name)) return std::nullopt;
    const std::string_view bytes = detail::reply_text(*reply);
    if (bytes.size() > state.options.max_entry_bytes) {
        return refused("the value (" + std::to_string(bytes.size()) +
                       " bytes) is larger than max_entry_bytes");
    }
    try {
        ObjectCode code = decode_entry(bytes, key, state.secret);
        ++state.hits;
        return code;
    } catch (const detail::DecodeCostExceeded& e) {
        state.refused_for_cost(name, e.what(), probing);
        return std::nullopt;
    } catch (const SerializationError& e) {
        return refused(e.what());
    } catch (const std::bad_alloc&) {
        ++state.misses;
        return std::nullopt;
    }
}

void RemoteProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put remote");
    State& state = *state_;
    const std::string bytes = encode_entry(key, code, state.secret);
    if (bytes.size() > state.options.max_entry_bytes) {
        ++state.oversized;
        return;
    }
    bool probing = false;
    if (!state.backoff.may_try(probing)) {
        ++state.skipped;
        ++state.failed_stores;
        return;
    }
    const std::string name = redis_key(key);
    const std::string expiry = std::to_string(state.options.expiry.count());
    std::vector<std::string_view> arguments{"SET", name, bytes};
    if (state.options.expiry.count() > 0) {
        arguments.push_back("EX");
        arguments.push_back(expiry);
    }
    auto failed = [&](const std::string& why) {
        ++state.failed_stores;
        return CacheError("RemoteProgramCache::put of '" + code.name() + "' (" +
                          std::string(to_string(code.code_type())) + ", " +
                          std::to_string(bytes.size()) + " bytes) as " + name + ": " + why);
    };
    RedisReply reply;
    try {
        reply = state.pool.run(arguments);
    } catch (const RedisFailure& failure) {
        state.backoff.failed(probing);
        state.reports.report(
            failure.cause, "",
            std::string(failure.what()) + " (puts fail; retrying after a back-off)");
        throw failed(failure.what());
    }
    state.answered("SET", detail::reply_type(*reply) != RedisReplyType::error);
    if (detail::reply_type(*reply) == RedisReplyType::error) {
        ++state.server_errors;
        const std::string text(detail::reply_text(*reply));
        const std::string message = "SET on " + state.options.display_url() + " refused: " + text;
        state.reports.report("SET " + text.substr(0, text.find(' ')), "SET", message);
        throw failed(message);
    }
    ++state.insertions;
}

CacheStats RemoteProgramCache::stats() const {
    CacheStats stats;
    stats.hits = state_->hits;
    stats.misses = state_->misses;
    stats.insertions = state_->insertions;
    stats.corrupt_entries = state_->corrupt;
    stats.failed_stores = state_->failed_stores;
    return stats;
}

RemoteCacheCounters RemoteProgramCache::counters() const {
    RemoteCacheCounters counters;
    counters.connections_opened = state_->pool.connections_opened;
    counters.connection_failures = state_->pool.connection_failures;
    counters.command_failures = state_->pool.command_failures;
    counters.server_errors = state_->server_errors;
    counters.skipped = state_->skipped;
    counters.oversized = state_->oversized;
    counters.locks_acquired = state_->locks_acquired;
    counters.lock_waits = state_->lock_waits;
    counters.lock_wait_hits = state_->lock_wait_hits;
    counters.lock_wait_timeouts = state_->lock_wait_timeouts;
    counters.locks_lost = state_->locks_lost;
    counters.lock_wait_ns = state_->lock_wait_ns;
    counters.bytes_received = state_->pool.bytes_received;
    return counters;
}

void RemoteProgramCache::clear() {
    state_->scan("clear", [&](const std::vector<std::string_view>& names) {
        std::vector<std::string_view> arguments{"UNLINK"};
        arguments.insert(arguments.end(), names.begin(), names.end());
        state_->run_or_throw(arguments, "clear");
    });
}

std::uint64_t RemoteProgramCache::server_entries() {
    std::uint64_t count = 0;
    state_->scan("server_entries",
                 [&](const std::vector<std::string_view>& names) { count += names.size(); });
    return count;
}

}  // namespace cudacore
