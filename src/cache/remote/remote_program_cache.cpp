#include "cudacore/remote_program_cache.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/warnings.hpp"

#include "cache/activity_counters.hpp"
#include "cache/cancellable_wait.hpp"
#include "cache/entry_trust.hpp"
#include "cache/remote/remote_entry.hpp"
#include "cache/remote/redis_connection.hpp"
#include "code/decode_cost.hpp"
#include "support/cudacore_trace.hpp"

#include <mutex>
#include <new>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace cudacore {

using detail::RedisConnection;
using detail::RedisFailure;
using detail::RedisReply;
using detail::RedisReplyType;

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_nanoseconds() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

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

// Deletes the lock only while it still holds the caller's token, in one step on the server: a
// lock that expired and was set again by another process is left to its new owner.
constexpr std::string_view release_lock_script =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) "
    "else return 0 end";

// A token no other lock holder has: this process, and 128 random bits.
std::string lock_token() {
    std::random_device device;
    char text[64];
    std::snprintf(text, sizeof text, "%ld-%08x%08x%08x%08x", static_cast<long>(::getpid()),
                  device(), device(), device(), device());
    return text;
}

}  // namespace

namespace detail {
// The remote tier's counters in cache_stats(), under "remote".
constinit CacheTier remote_tier{"remote"};
}  // namespace detail

struct RemoteProgramCache::State {
    explicit State(RemoteCacheOptions options_)
        : options(std::move(options_)),
          secret(detail::read_entry_secret(options)),
          trust(detail::entry_trust(secret)) {
        retry_delay_ms = options.retry_after.count();
        key_stem = options.key_prefix + ":v" +
                   std::to_string(ObjectCode::serialization_format_version) + "." +
                   std::to_string(entry_format) + ":";
    }

    // The format of the values (RemoteProgramCache::encode_entry), in the keys: 1 was the disk
    // cache's unsealed entry.
    static constexpr int entry_format = 2;
    RemoteCacheOptions options;
    std::string secret;  // empty: entries sealed by SHA-256, not authenticated
    std::string trust;   // entry_trust()
    std::string key_stem;

    std::mutex pool_mutex;
    std::vector<std::unique_ptr<RedisConnection>> idle;
    pid_t pool_pid = ::getpid();  // the process whose connections `idle` holds

    // Also counted in cache_stats() (a damaged value and a failed store are failures there).
    using Counter = detail::TierCounter;
    using Event = detail::TierEvent;
    Counter hits{detail::remote_tier, Event::hit}, misses{detail::remote_tier, Event::miss},
        insertions{detail::remote_tier, Event::store}, corrupt{detail::remote_tier, Event::failure},
        failed_stores{detail::remote_tier, Event::failure};
    std::atomic<std::uint64_t> connections_opened{0}, connection_failures{0}, command_failures{0},
        server_errors{0}, skipped{0}, oversized{0}, bytes_received{0};
    std::atomic<std::uint64_t> locks_acquired{0}, lock_waits{0}, lock_wait_hits{0},
        lock_wait_timeouts{0}, locks_lost{0}, lock_wait_ns{0};

    // Back-off: 0 while the server works; else the steady-clock time before which nothing is
    // tried. The thread that moves it forward once it has passed is the one that retries.
    std::atomic<std::int64_t> retry_at_ns{0};
    std::mutex backoff_mutex;
    std::int64_t retry_delay_ms = 0;  // with backoff_mutex held

    std::mutex report_mutex;
    // Causes warned about, each with the command whose success ends it ("" for the connection's
    // causes, ended by any success): one warning per cause until then.
    std::map<std::string, std::string> reported;
    std::atomic<bool> any_reported{false};

    // Whether this call may use the server; `probing` is set for the one retrying after a back-off.
    bool may_try(bool& probing) {
        probing = false;
        std::int64_t at = retry_at_ns.load(std::memory_order_acquire);
        if (at == 0) return true;
        const std::int64_t now = now_nanoseconds();
        if (now < at) return false;
        std::int64_t delay_ms;
        {
            std::lock_guard lock(backoff_mutex);
            delay_ms = retry_delay_ms;
        }
        // Others keep skipping while this one tries (for at most the delay, then another may).
        if (!retry_at_ns.compare_exchange_strong(at, now + delay_ms * 1'000'000)) return false;
        probing = true;
        return true;
    }

    // The server answered `command`: stop backing off. `succeeded`: and did what was asked (not
    // an error reply), so the connection's causes and that command's may be reported again.
    void answered(std::string_view command, bool succeeded) {
        if (retry_at_ns.load(std::memory_order_relaxed) != 0) {
            std::lock_guard lock(backoff_mutex);
            retry_at_ns.store(0, std::memory_order_release);
            retry_delay_ms = options.retry_after.count();
        }
        if (succeeded && any_reported.load(std::memory_order_relaxed)) {
            std::lock_guard lock(report_mutex);
            std::erase_if(reported, [&](const auto& entry) {
                return entry.second.empty() || entry.second == command;
            });
            any_reported = !reported.empty();
        }
    }

    // A connection-level failure: start backing off, or lengthen the back-off after a failed
    // retry; a failure seen by another thread of the same outage changes nothing.
    void server_failed(bool probing) {
        std::lock_guard lock(backoff_mutex);
        const std::int64_t now = now_nanoseconds();
        if (probing) {
            retry_delay_ms = std::min<std::int64_t>(retry_delay_ms * 2,
                                                    options.max_retry_after.count());
        } else if (retry_at_ns.load() != 0) {
            return;
        } else {
            retry_delay_ms = options.retry_after.count();
        }
        retry_at_ns.store(now + retry_delay_ms * 1'000'000, std::memory_order_release);
    }

    // The value of `name` would cost more to decode than its bound (`why`): refused as a reply
    // too large to read is, a failure whose cost comes once per back-off, not at every lookup.
    void refused_for_cost(const std::string& name, const std::string& why, bool probing) {
        ++corrupt;
        server_failed(probing);
        report("decode cost", "", "GET " + name + ": " + why + " (get() is a miss; retrying after a back-off)");
        detail::remote_tier.count(detail::TierEvent::failure);
        ++misses;
    }

    void report(const std::string& cause, const std::string& command, const std::string& message) {
        {
            std::lock_guard lock(report_mutex);
            if (!reported.emplace(cause, command).second) return;
            any_reported = true;
        }
        warn(WarningKind::remote_cache_failed, "RemoteProgramCache: " + message);
    }

    std::unique_ptr<RedisConnection> acquire(bool& reused, Clock::time_point deadline) {
        {
            std::lock_guard lock(pool_mutex);
            if (pool_pid != ::getpid()) {
                // A fork()ed child: the pooled sockets are its parent's conversations. Closing
                // this process's copies leaves the parent's connections alone.
                idle.clear();
                pool_pid = ::getpid();
            }
            if (!idle.empty()) {
                auto connection = std::move(idle.back());
                idle.pop_back();
                reused = true;
                return connection;
            }
        }
        reused = false;
        try {
            auto connection = std::make_unique<RedisConnection>(
                options, std::min(Clock::now() + options.connect_timeout, deadline), &bytes_received);
            ++connections_opened;
            return connection;
        } catch (const RedisFailure&) {
            ++connection_failures;
            throw;
        }
    }

    void release(std::unique_ptr<RedisConnection> connection) {
        std::lock_guard lock(pool_mutex);
        if (!connection->broken() && pool_pid == ::getpid() &&
            idle.size() < options.max_idle_connections)
            idle.push_back(std::move(connection));
    }

    void drop_idle() {
        std::vector<std::unique_ptr<RedisConnection>> dropped;
        std::lock_guard lock(pool_mutex);
        dropped.swap(idle);
    }

    // The deadline of a call that runs one command: a connection made, then the command.
    Clock::time_point call_deadline() const {
        return Clock::now() + options.connect_timeout + options.operation_timeout;
    }

    // Runs one command on a pooled connection, all of it by `deadline` (call_deadline() by
    // default). A pooled connection the server has closed since (it restarted, or dropped idle
    // clients) is replaced once by a fresh one, and the other idle ones are dropped too. Throws
    // RedisFailure (counted, but for a reply over max_entry_bytes) when the server cannot be used.
    RedisReply run(const std::vector<std::string_view>& arguments,
                   std::optional<Clock::time_point> deadline = std::nullopt) {
        const Clock::time_point until = deadline ? *deadline : call_deadline();
        for (int attempt = 0;; ++attempt) {
            bool reused = false;
            auto connection = acquire(reused, until);
            try {
                RedisReply reply = connection->command(
                    arguments, std::min(Clock::now() + options.operation_timeout, until));
                release(std::move(connection));
                return reply;
            } catch (const RedisFailure& failure) {
                if (failure.kind == RedisFailure::Kind::too_large) throw;
                if (reused && attempt == 0 && failure.kind != RedisFailure::Kind::timeout) {
                    drop_idle();
                    continue;
                }
                ++command_failures;
                throw;
            }
        }
    }

    // Runs `arguments` for a maintenance call (clear, server_entries): tried even while backing
    // off; failures throw CacheError.
    RedisReply run_or_throw(const std::vector<std::string_view>& arguments, const char* what) {
        RedisReply reply;
        try {
            reply = run(arguments);
        } catch (const RedisFailure& failure) {
            server_failed(false);
            throw CacheError(std::string("RemoteProgramCache::") + what + ": " + failure.what());
        }
        const bool refused = detail::reply_type(*reply) == RedisReplyType::error;
        answered(arguments[0], !refused);
        if (refused) {
            ++server_errors;
            throw CacheError(std::string("RemoteProgramCache::") + what + ": " + std::string(arguments[0]) +
                             " on " + options.display_url() +
                             " refused: " + std::string(detail::reply_text(*reply)));
        }
        return reply;
    }

    // Whether a GET's reply holds a value; when not, counts the miss (and a refusal or another
    // type under the key), and reports a refusal.
    bool holds_value(const RedisReply& reply, const std::string& name) {
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
                    return false;
                }
                ++server_errors;
                detail::remote_tier.count(detail::TierEvent::failure);
                report("GET " + text.substr(0, text.find(' ')), "GET",
                       "GET " + name + " on " + options.display_url() + " refused: " + text + " (a miss)");
                return false;
            }
            default:  // another type stored under our key: not an entry
                ++corrupt;
                ++misses;
                return false;
        }
    }

    // One attempt at the compile lock `lock`: true when this process now holds it, false when
    // another one does, nullopt when the fleet's lock cannot be used now (backing off, or the
    // server failed or refused).
    std::optional<bool> try_compile_lock(const std::string& lock, const std::string& token,
                                         const std::string& expiry_ms) {
        bool probing = false;
        if (!may_try(probing)) {
            ++skipped;
            return std::nullopt;
        }
        RedisReply reply;
        try {
            reply = run({"SET", lock, token, "NX", "PX", expiry_ms});
        } catch (const RedisFailure& failure) {
            server_failed(probing);
            report(failure.cause, "", std::string(failure.what()) + " (compiling without the fleet's lock)");
            return std::nullopt;
        }
        const RedisReplyType type = detail::reply_type(*reply);
        // Not "SET": a small lock that fits must not end the report of a store refused for its
        // size (a full server), or each refused store would be warned about again.
        answered("SET NX", type != RedisReplyType::error);
        if (type == RedisReplyType::error) {
            // Counted, not warned about: a server that refuses this SET (full, or an ACL without
            // it) refuses the store after the compile too, and put() warns about that, once.
            ++server_errors;
            return std::nullopt;
        }
        return type == RedisReplyType::status;  // OK: ours
    }

    // The turn of a caller that has just taken `lock` (with `token`): a lease, or the entry
    // `find` finds when it was stored (and the lock released) between the caller's miss and this
    // lock (then nothing is compiled, and the lease is dropped here). `waited`: the caller waited
    // for another process first.
    CompileTurn leased_turn(const std::string& lock, const std::string& token,
                            const std::function<std::optional<ObjectCode>()>& find, bool waited);

    // Releases the compile lock `lock` if it still holds `token` (compare-and-delete); a lock
    // that cannot be released is left to expire.
    void release_compile_lock(const std::string& lock, const std::string& token) {
        bool probing = false;
        if (!may_try(probing)) return;  // backing off: the lock expires
        RedisReply released;
        try {
            released = run({"EVAL", release_lock_script, "1", lock, token});
        } catch (const RedisFailure&) {
            server_failed(probing);
            return;
        }
        answered("EVAL", detail::reply_type(*released) != RedisReplyType::error);
        if (detail::reply_type(*released) == RedisReplyType::error) {
            ++server_errors;
            const std::string text(detail::reply_text(*released));
            report("EVAL " + text.substr(0, text.find(' ')), "EVAL",
                   "EVAL (releasing the compile lock " + lock + ") on " + options.display_url() +
                       " refused: " + text +
                       " (the lock is left to expire after lock_ms, and other "
                       "processes wait for it; allow EVAL to this user)");
            return;
        }
        if (detail::reply_type(*released) == RedisReplyType::integer && detail::reply_integer(*released) == 0)
            ++locks_lost;
    }

    // Calls `each` with every batch of keys under the prefix (all format versions).
    template <class Each>
    void scan(const char* what, Each&& each) {
        const std::string pattern = options.key_prefix + ":v[0-9]*:*";
        std::string cursor = "0";
        do {
            RedisReply reply =
                run_or_throw({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}, what);
            if (detail::reply_type(*reply) != RedisReplyType::array ||
                detail::reply_elements(*reply) != 2) {
                throw CacheError(std::string("RemoteProgramCache::") + what + ": SCAN on " +
                                 options.display_url() + " gave an unexpected reply");
            }
            cursor = std::string(detail::reply_text(detail::reply_element(*reply, 0)));
            const auto& keys = detail::reply_element(*reply, 1);
            std::vector<std::string_view> names;
            for (std::size_t i = 0; i < detail::reply_elements(keys); ++i)
                names.push_back(detail::reply_text(detail::reply_element(keys, i)));
            if (!names.empty()) each(names);
        } while (cursor != "0");
    }
};

namespace {

// The lock of one key held by this process while it compiles; released by compare-and-delete.
class RedisCompileLease final : public CompileLease {
public:
    RedisCompileLease(std::function<void()> release) : release_(std::move(release)) {}
    ~RedisCompileLease() override {
        try {
            release_();
        } catch (...) {
            // Not released: the lock expires on its own.
        }
    }

private:
    std::function<void()> release_;
};

}  // namespace

CompileTurn RemoteProgramCache::State::leased_turn(
    const std::string& lock, const std::string& token,
    const std::function<std::optional<ObjectCode>()>& find, bool waited) {
    ++locks_acquired;
    CompileTurn turn;
    turn.lease = std::make_unique<RedisCompileLease>(
        [this, lock, token] { release_compile_lock(lock, token); });
    if (std::optional<ObjectCode> code = find()) {
        if (waited) ++lock_wait_hits;
        return {std::move(code), nullptr};
    }
    return turn;
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
    if (!state.may_try(probing)) {
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
        reply = state.run({"GET", name});
    } catch (const RedisFailure& failure) {
        // A reply refused for its size is a failure like any other: what it would cost comes
        // once per back-off, not at every lookup. It is the value under the key (counted
        // corrupt), or a server that does not speak for its keys.
        const bool too_large = failure.kind == RedisFailure::Kind::too_large;
        if (too_large) ++state.corrupt;
        state.server_failed(probing);
        state.report(failure.cause, "",
                     (too_large ? "the value of " + name + ": " : std::string()) + failure.what() +
                         " (get() is a miss; retrying after a back-off)");
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
    if (!state.may_try(probing)) {
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
        reply = state.run(arguments);
    } catch (const RedisFailure& failure) {
        state.server_failed(probing);
        state.report(failure.cause, "", std::string(failure.what()) +
                                        " (puts fail; retrying after a back-off)");
        throw failed(failure.what());
    }
    state.answered("SET", detail::reply_type(*reply) != RedisReplyType::error);
    if (detail::reply_type(*reply) == RedisReplyType::error) {
        ++state.server_errors;
        const std::string text(detail::reply_text(*reply));
        const std::string message = "SET on " + state.options.display_url() + " refused: " + text;
        state.report("SET " + text.substr(0, text.find(' ')), "SET", message);
        throw failed(message);
    }
    ++state.insertions;
}

std::string RemoteProgramCache::redis_lock_key(const CacheKey& key) const {
    return state_->options.key_prefix + ":lock:" + key.hex();
}

CompileTurn RemoteProgramCache::await_compile_turn(
    const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) {
    return await_compile_turn(key, find, CancellationToken{});
}

CompileTurn RemoteProgramCache::await_compile_turn(
    const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find,
    const CancellationToken& cancellation) {
    State& state = *state_;
    CompileTurn cancelled;
    cancelled.cancelled = true;
    if (cancellation.is_cancelled()) return cancelled;
    if (state.options.lock_expiry.count() == 0) return {};
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache wait remote");
    using clock = std::chrono::steady_clock;
    const clock::time_point start = clock::now();
    const clock::time_point deadline = start + state.options.lock_wait;
    const std::string lock = redis_lock_key(key);
    const std::string token = lock_token();
    const std::string expiry_ms = std::to_string(state.options.lock_expiry.count());
    std::chrono::milliseconds delay{5};
    bool waited = false;
    auto waited_until_now = [&] {
        if (waited)
            state.lock_wait_ns += static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count());
    };
    for (;;) {
        const std::optional<bool> taken = state.try_compile_lock(lock, token, expiry_ms);
        if (!taken) {  // compile without the fleet
            waited_until_now();
            return {};
        }
        if (*taken) {
            waited_until_now();
            return state.leased_turn(lock, token, find, waited);
        }
        // Held by another process: look for its entry, then wait a little and try again.
        if (!waited) {
            waited = true;
            ++state.lock_waits;
        }
        if (std::optional<ObjectCode> code = find()) {
            ++state.lock_wait_hits;
            waited_until_now();
            return {std::move(code), nullptr};
        }
        const clock::time_point now = clock::now();
        if (now >= deadline) {
            ++state.lock_wait_timeouts;
            waited_until_now();
            return {};
        }
        // A cancelled compile stops waiting within detail::cancellation_poll; it took no lock.
        if (!detail::sleep_unless_cancelled(std::min<clock::duration>(delay, deadline - now),
                                            cancellation)) {
            waited_until_now();
            return cancelled;
        }
        delay = std::min(delay * 2, std::chrono::milliseconds{250});
    }
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
    counters.connections_opened = state_->connections_opened;
    counters.connection_failures = state_->connection_failures;
    counters.command_failures = state_->command_failures;
    counters.server_errors = state_->server_errors;
    counters.skipped = state_->skipped;
    counters.oversized = state_->oversized;
    counters.locks_acquired = state_->locks_acquired;
    counters.lock_waits = state_->lock_waits;
    counters.lock_wait_hits = state_->lock_wait_hits;
    counters.lock_wait_timeouts = state_->lock_wait_timeouts;
    counters.locks_lost = state_->locks_lost;
    counters.lock_wait_ns = state_->lock_wait_ns;
    counters.bytes_received = state_->bytes_received;
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
