// What one RemoteProgramCache holds (its state_): the options, the secret and the names made
// from it, the connection pool, the back-off, the warnings and the counters, with the steps its
// calls share. Its get, put and maintenance are in remote_program_cache.cpp, the fleet's compile
// lock in remote_program_cache_compile_lock.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/activity_counters.hpp"
#include "remote/connection_pool.hpp"
#include "remote/failure_reports.hpp"
#include "remote/redis_connection.hpp"
#include "remote/server_backoff.hpp"
#include "cudacore/remote_program_cache.hpp"

namespace cudacore {

namespace detail {
// The remote tier's counters in cache_stats(), under "remote".
extern constinit CacheTier remote_tier;
}  // namespace detail

struct RemoteProgramCache::State {
    explicit State(RemoteCacheOptions options_);

    // The format of the values (RemoteProgramCache::encode_entry), in the keys: 1 was the disk
    // cache's unsealed entry.
    static constexpr int entry_format = 2;
    RemoteCacheOptions options;
    std::string secret;  // empty: entries sealed by SHA-256, not authenticated
    std::string trust;   // entry_trust()
    std::string key_stem;

    detail::ConnectionPool pool{options};
    detail::ServerBackoff backoff{options.retry_after, options.max_retry_after};
    detail::FailureReports reports;

    // Also counted in cache_stats() (a damaged value and a failed store are failures there).
    using Counter = detail::TierCounter;
    using Event = detail::TierEvent;
    Counter hits{detail::remote_tier, Event::hit}, misses{detail::remote_tier, Event::miss},
        insertions{detail::remote_tier, Event::store}, corrupt{detail::remote_tier, Event::failure},
        failed_stores{detail::remote_tier, Event::failure};
    std::atomic<std::uint64_t> server_errors{0}, skipped{0}, oversized{0};
    std::atomic<std::uint64_t> locks_acquired{0}, lock_waits{0}, lock_wait_hits{0},
        lock_wait_timeouts{0}, locks_lost{0}, lock_wait_ns{0};

    // The server answered `command`: stop backing off. `succeeded`: and did what was asked (not
    // an error reply), so the connection's causes and that command's may be reported again.
    void answered(std::string_view command, bool succeeded) {
        backoff.answered();
        if (succeeded) reports.succeeded(command);
    }

    // The value of `name` would cost more to decode than its bound (`why`): refused as a reply
    // too large to read is, a failure whose cost comes once per back-off, not at every lookup.
    void refused_for_cost(const std::string& name, const std::string& why, bool probing);

    // Runs `arguments` for a maintenance call (clear, server_entries): tried even while backing
    // off; failures throw CacheError.
    detail::RedisReply run_or_throw(const std::vector<std::string_view>& arguments,
                                    const char* what);

    // Whether a GET's reply holds a value; when not, counts the miss (and a refusal or another
    // type under the key), and reports a refusal.
    bool holds_value(const detail::RedisReply& reply, const std::string& name);

    // One attempt at the compile lock `lock`: true when this process now holds it, false when
    // another one does, nullopt when the fleet's lock cannot be used now (backing off, or the
    // server failed or refused).
    std::optional<bool> try_compile_lock(const std::string& lock, const std::string& token,
                                         const std::string& expiry_ms);

    // Whether the lock `lock`, held by another, may be a fleet process's: one set with an expiry
    // no longer than this cache's lock_ms. Any writer can set a key: a lock that never expires,
    // or expires later than a lock is taken for, is waited for by no one. True when it cannot
    // be told (the server failed: the wait goes on as bounded by lock_wait_ms).
    bool lock_may_be_fleets(const std::string& lock);

    // The turn of a caller that has just taken `lock` (with `token`): a lease, or the entry
    // `find` finds when it was stored (and the lock released) between the caller's miss and this
    // lock (then nothing is compiled, and the lease is dropped here). `waited`: the caller waited
    // for another process first.
    CompileTurn leased_turn(const std::string& lock, const std::string& token,
                            const std::function<std::optional<ObjectCode>()>& find, bool waited);

    // Releases the compile lock `lock` if it still holds `token` (compare-and-delete); a lock
    // that cannot be released is left to expire.
    void release_compile_lock(const std::string& lock, const std::string& token);

    // Calls `each` with every batch of keys under the prefix (all format versions).
    void scan(const char* what,
              const std::function<void(const std::vector<std::string_view>&)>& each);
};

}  // namespace cudacore
