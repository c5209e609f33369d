// The fleet's compile lock of a RemoteProgramCache: one process compiles a key while the others
// wait for its entry (RemoteProgramCache::await_compile_turn), by a lock with an expiry on the
// server, released by compare-and-delete.
#include <unistd.h>

#include <cstdio>
#include <random>

#include "cache/cancellable_wait.hpp"
#include "remote/remote_cache_state.hpp"
#include "support/cudacore_trace.hpp"

namespace cudacore {

using detail::RedisFailure;
using detail::RedisReply;
using detail::RedisReplyType;

namespace {

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

std::optional<bool> RemoteProgramCache::State::try_compile_lock(const std::string& lock,
                                                                const std::string& token,
                                                                const std::string& expiry_ms) {
    bool probing = false;
    if (!backoff.may_try(probing)) {
        ++skipped;
        return std::nullopt;
    }
    RedisReply reply;
    try {
        reply = pool.run({"SET", lock, token, "NX", "PX", expiry_ms});
    } catch (const RedisFailure& failure) {
        backoff.failed(probing);
        reports.report(failure.cause, "",
                       std::string(failure.what()) + " (compiling without the fleet's lock)");
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

bool RemoteProgramCache::State::lock_may_be_fleets(const std::string& lock) {
    RedisReply reply;
    try {
        reply = pool.run({"PTTL", lock});
    } catch (const RedisFailure&) {
        return true;
    }
    if (detail::reply_type(*reply) != RedisReplyType::integer) return true;
    const long long left_ms = detail::reply_integer(*reply);
    if (left_ms != -1 && left_ms <= options.lock_expiry.count()) return true;  // -2: gone meanwhile
    reports.report("lock " + lock, "a foreign lock (warned once)",
                   "the compile lock " + lock + " on " + options.display_url() + " " +
                       (left_ms == -1 ? std::string("never expires")
                                      : "expires in " + std::to_string(left_ms) + " ms, more than lock_ms (" +
                                            std::to_string(options.lock_expiry.count()) + ")") +
                       ": not a fleet process's; compiling without waiting for it");
    return false;
}

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

void RemoteProgramCache::State::release_compile_lock(const std::string& lock,
                                                     const std::string& token) {
    bool probing = false;
    if (!backoff.may_try(probing)) return;  // backing off: the lock expires
    RedisReply released;
    try {
        released = pool.run({"EVAL", release_lock_script, "1", lock, token});
    } catch (const RedisFailure&) {
        backoff.failed(probing);
        return;
    }
    answered("EVAL", detail::reply_type(*released) != RedisReplyType::error);
    if (detail::reply_type(*released) == RedisReplyType::error) {
        ++server_errors;
        const std::string text(detail::reply_text(*released));
        reports.report("EVAL " + text.substr(0, text.find(' ')), "EVAL",
                       "EVAL (releasing the compile lock " + lock + ") on " +
                           options.display_url() + " refused: " + text +
                           " (the lock is left to expire after lock_ms, and other "
                           "processes wait for it; allow EVAL to this user)");
        return;
    }
    if (detail::reply_type(*released) == RedisReplyType::integer &&
        detail::reply_integer(*released) == 0)
        ++locks_lost;
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
            if (!state.lock_may_be_fleets(lock)) return {};
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

}  // namespace cudacore
