// One compile per key across processes sharing a RemoteProgramCache, against a real redis-server
// that each test starts on a free loopback port: many processes compiling the same keys compile
// each once; the lock owner killed mid-compile and another process compiling after the lock's
// expiry; a waiter giving up after its bound; a lock never released by a process that no longer
// owns it. Every wait is bounded in count and time.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "remote/redis_connection.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <map>
#include <sstream>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using test::RedisServer;

// The worker's keys and codes (tests/helpers/remote_cache_worker.cpp makes the same).
CacheKey worker_key(int i) { return CacheKey::of_bytes("fleet key " + std::to_string(i)); }
ObjectCode worker_code(int i) {
    std::string bytes(2000 + i, '\0');
    for (std::size_t at = 0; at < bytes.size(); ++at) bytes[at] = static_cast<char>((i * 131 + at) % 251);
    return ObjectCode::from_cubin(std::move(bytes), "fleet-" + std::to_string(i));
}

// The last "NAME VALUE" pair of a worker's output ("hits 3 compiles 1 ... locks 1 ..."); -1 when
// it is not there.
long long counter(const std::string& output, const std::string& name) {
    std::istringstream words(output);
    long long value = -1;
    for (std::string word; words >> word;) {
        if (word == name && !(words >> value)) return -1;
    }
    return value;
}

// Raw commands, as another client would send them.
std::unique_ptr<detail::RedisConnection> raw_client(const RedisServer& server) {
    RemoteCacheOptions options;
    options.port = server.port();
    return std::make_unique<detail::RedisConnection>(options);
}

bool exists(detail::RedisConnection& client, const std::string& key) {
    return detail::reply_integer(*client.command({"EXISTS", key})) == 1;
}

// Runs `count` workers at once, each to completion (bounded by `timeout_seconds`).
std::vector<test::ProcessResult> run_workers(std::size_t count, const std::vector<std::string>& arguments,
                                             unsigned timeout_seconds) {
    std::vector<test::ProcessResult> results(count);
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < count; ++p) {
        threads.emplace_back([&, p] {
            std::vector<std::string> argv{test::helper_path("remote_cache_worker").string()};
            argv.insert(argv.end(), arguments.begin(), arguments.end());
            test::ProcessLimits limits;
            limits.timeout_seconds = timeout_seconds;
            results[p] = test::run_process(argv, {}, limits);
        });
    }
    for (auto& thread : threads) thread.join();
    return results;
}

std::function<ObjectCode()> counted(std::atomic<int>& compiles, int i) {
    return [&compiles, i] {
        ++compiles;
        return worker_code(i);
    };
}

TEST(RemoteCompileLock, EightProcessesCompileEachKeyOnce) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    // 8 processes x 3 threads, each asking 24 times over 8 keys (in the same order in every
    // process), a "compile" taking 300 ms: the processes overlap, and wait for each other.
    const auto results = run_workers(
        8, {server.url("", "lock_ms=10000&lock_wait_ms=30000"), "3", "24", "8", "300"}, 120);
    long long compiles = 0, locks = 0, waits = 0, timeouts = 0, lost = 0;
    for (const auto& result : results) {
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        compiles += counter(result.out, "compiles");
        locks += counter(result.out, "locks");
        waits += counter(result.out, "waits");
        timeouts += counter(result.out, "timeouts");
        lost += counter(result.out, "lost");
    }
    EXPECT_EQ(compiles, 8);  // one per key, across the 8 processes
    EXPECT_GE(locks, 8);     // a lock taken after the entry was stored compiles nothing
    EXPECT_GT(waits, 0);
    EXPECT_EQ(timeouts, 0);
    EXPECT_EQ(lost, 0);
    RemoteProgramCache check(RemoteCacheOptions::from_url(server.url()));
    for (int i = 0; i < 8; ++i) {
        const auto code = check.get(worker_key(i));
        ASSERT_TRUE(code) << "key " << i;
        EXPECT_EQ(*code, worker_code(i));
        EXPECT_FALSE(exists(*raw_client(server), check.redis_lock_key(worker_key(i))))
            << "the lock of key " << i << " was left behind";
    }
}

TEST(RemoteCompileLock, CompileCachedThroughTiersCompilesEachProgramOnceAcrossProcesses) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    // 4 processes x 2 threads, each compiling the same 6 C++ programs through memory + remote.
    const auto results = run_workers(
        4, {"--compile-cached", server.url("", "lock_ms=30000&lock_wait_ms=60000"), "2", "6"}, 240);
    long long compiles = 0, timeouts = 0;
    for (const auto& result : results) {
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        compiles += counter(result.out, "compiles");
        timeouts += counter(result.out, "timeouts");
    }
    EXPECT_EQ(compiles, 6);
    EXPECT_EQ(timeouts, 0);
}

TEST(RemoteCompileLock, OwnerKilledMidCompileLetsAnotherProcessCompileAfterTheExpiry) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url("", "lock_ms=3000&lock_wait_ms=20000");
    RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
    const std::string lock = cache.redis_lock_key(worker_key(0));
    auto client = raw_client(server);

    // The owner takes the lock and "compiles" for a minute; it is killed once the lock is set.
    const pid_t owner = test::spawn(
        {test::helper_path("remote_cache_worker").string(), url, "1", "1", "1", "60000"});
    const bool locked = test::wait_until([&] { return exists(*client, lock); }, 20s);
    ::kill(owner, SIGKILL);
    EXPECT_EQ(test::wait_for(owner), -SIGKILL);
    ASSERT_TRUE(locked) << "the owner never took the lock";
    EXPECT_GT(detail::reply_integer(*client->command({"PTTL", lock})), 0);  // not released

    // Another process waits for the dead owner's lock to expire, then compiles itself.
    const auto start = std::chrono::steady_clock::now();
    const auto results = run_workers(1, {url, "1", "1", "1", "0"}, 60);
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(results[0].exit_code, 0) << results[0].out << results[0].err;
    EXPECT_EQ(counter(results[0].out, "compiles"), 1);
    EXPECT_EQ(counter(results[0].out, "waits"), 1);
    EXPECT_EQ(counter(results[0].out, "locks"), 1);
    EXPECT_EQ(counter(results[0].out, "timeouts"), 0);
    EXPECT_LT(waited, 15s);  // the expiry, not the wait bound, ended the wait
    const auto code = cache.get(worker_key(0));
    ASSERT_TRUE(code);
    EXPECT_EQ(*code, worker_code(0));
    EXPECT_FALSE(exists(*client, lock));
}

TEST(RemoteCompileLock, WaiterCompilesItselfAfterItsBound) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache owner(RemoteCacheOptions::from_url(server.url("", "lock_ms=60000")));
    RemoteProgramCache waiter(
        RemoteCacheOptions::from_url(server.url("", "lock_ms=60000&lock_wait_ms=300")));
    const CacheKey key = worker_key(3);
    CompileTurn held = owner.await_compile_turn(key, [] { return std::nullopt; });
    ASSERT_TRUE(held.lease);
    ASSERT_FALSE(held.found);

    std::atomic<int> compiles{0};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(get_or_compile(waiter, key, counted(compiles, 3)), worker_code(3));
    const auto waited = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(compiles.load(), 1);
    EXPECT_GE(waited, 300ms);
    EXPECT_LT(waited, 10s);
    EXPECT_EQ(waiter.counters().lock_waits, 1u);
    EXPECT_EQ(waiter.counters().lock_wait_timeouts, 1u);
    EXPECT_EQ(waiter.counters().locks_acquired, 0u);
    EXPECT_GE(waiter.counters().lock_wait_ns, 300'000'000u);

    // The owner's lock was left alone; its release removes it.
    auto client = raw_client(server);
    EXPECT_TRUE(exists(*client, owner.redis_lock_key(key)));
    held.lease.reset();
    EXPECT_FALSE(exists(*client, owner.redis_lock_key(key)));
    EXPECT_EQ(owner.counters().locks_lost, 0u);
}

// Anyone who can write to the server can set a lock key: one that never expires, or expires
// later than a lock is taken for, is no fleet process's, and is not waited for (one warning).
TEST(RemoteCompileLock, ALockPlantedWithoutAFleetsExpiryIsNotWaitedFor) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache waiter(RemoteCacheOptions::from_url(server.url("", "lock_ms=60000&lock_wait_ms=20000")));
    auto client = raw_client(server);
    test::WarningLog warnings;
    for (const bool with_expiry : {false, true}) {
        const CacheKey key = worker_key(with_expiry ? 11 : 10);
        const std::string lock = waiter.redis_lock_key(key);
        std::vector<std::string_view> planted{"SET", lock, "planted"};
        if (with_expiry) planted.insert(planted.end(), {"PX", "86400000"});
        ASSERT_EQ(detail::reply_text(*client->command(planted)), "OK");
        std::atomic<int> compiles{0};
        const auto start = std::chrono::steady_clock::now();
        EXPECT_EQ(get_or_compile(waiter, key, counted(compiles, 3)), worker_code(3));
        EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << (with_expiry ? "a day's expiry" : "no expiry");
        EXPECT_EQ(compiles.load(), 1);
    }
    EXPECT_EQ(waiter.counters().lock_waits, 0u);
    int foreign = 0;
    std::string seen;
    for (const auto& warning : warnings.seen) {
        foreign += warning.message.find("not a fleet process's") != std::string::npos;
        seen += warning.message + "\n";
    }
    EXPECT_EQ(foreign, 2) << seen;
}

TEST(RemoteCompileLock, ALockIsNeverReleasedByAProcessThatNoLongerOwnsIt) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache first(RemoteCacheOptions::from_url(server.url("", "lock_ms=200")));
    RemoteProgramCache second(RemoteCacheOptions::from_url(server.url("", "lock_ms=60000")));
    RemoteProgramCache third(
        RemoteCacheOptions::from_url(server.url("", "lock_ms=60000&lock_wait_ms=100")));
    const CacheKey key = worker_key(5);
    const std::string lock = first.redis_lock_key(key);
    auto client = raw_client(server);
    auto nothing = [] { return std::optional<ObjectCode>(); };

    CompileTurn first_turn = first.await_compile_turn(key, nothing);
    ASSERT_TRUE(first_turn.lease);
    const std::string first_token(detail::reply_text(*client->command({"GET", lock})));
    ASSERT_TRUE(test::wait_until([&] { return !exists(*client, lock); }, 10s))
        << "the lock did not expire";
    CompileTurn second_turn = second.await_compile_turn(key, nothing);
    ASSERT_TRUE(second_turn.lease);
    const std::string second_token(detail::reply_text(*client->command({"GET", lock})));
    EXPECT_NE(first_token, second_token);

    // The first process, done after its lock expired, does not release the second's lock.
    first_turn.lease.reset();
    EXPECT_EQ(first.counters().locks_lost, 1u);
    EXPECT_EQ(std::string(detail::reply_text(*client->command({"GET", lock}))), second_token);
    // So a third process still waits (and gives up after its bound, compiling itself).
    CompileTurn third_turn = third.await_compile_turn(key, nothing);
    EXPECT_FALSE(third_turn.lease);
    EXPECT_EQ(third.counters().lock_wait_timeouts, 1u);
    // The owner's release removes it.
    second_turn.lease.reset();
    EXPECT_FALSE(exists(*client, lock));
    EXPECT_EQ(second.counters().locks_lost, 0u);
}

// An ACL user that may GET and SET but not EVAL: each lock is taken but its release refused (it
// is left to expire), warned about once; the compiles and stores go on.
TEST(RemoteCompileLock, ARefusedReleaseIsOneWarning) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server("user default off\nuser writer on >pw ~cudacore:* +get +set +auth +select\n");
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("writer:pw", "lock_ms=500")));
    std::atomic<int> compiles{0};
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(get_or_compile(cache, worker_key(i), counted(compiles, i)), worker_code(i));
    EXPECT_EQ(compiles.load(), 3);
    EXPECT_EQ(cache.counters().locks_acquired, 3u);
    EXPECT_EQ(cache.counters().server_errors, 3u);
    EXPECT_EQ(cache.stats().insertions, 3u);
    int reported = 0;
    for (const auto& warning : warnings.seen) {
        if (warning.kind != WarningKind::remote_cache_failed) continue;
        ++reported;
        EXPECT_NE(warning.message.find("EVAL"), std::string::npos) << warning.message;
    }
    EXPECT_EQ(reported, 1);
}

// A full server (maxmemory, noeviction) that still takes the small lock but refuses each value:
// one warning in all, not one per refused store.
TEST(RemoteCompileLock, AFullServerIsOneWarningThoughLocksSucceed) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server("maxmemory 3mb\nmaxmemory-policy noeviction\n");
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url()));
    // Half a MiB a value: the first few fit, then the server refuses each value (its bytes push
    // the server over maxmemory) while the small locks still fit.
    const ObjectCode big = ObjectCode::from_cubin(std::string(512 << 10, 'x'), "big");
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(get_or_compile(cache, worker_key(i), [&] { return big; }), big);
    EXPECT_GT(cache.stats().failed_stores, 1u);
    EXPECT_GT(cache.counters().locks_acquired, cache.stats().insertions + 1);
    int reported = 0;
    for (const auto& warning : warnings.seen) reported += warning.kind == WarningKind::remote_cache_failed;
    EXPECT_EQ(reported, 1);
}

TEST(RemoteCompileLock, OptionsFromTheUrl) {
    const auto options = RemoteCacheOptions::from_url("redis://h:1/0?lock_ms=5&lock_wait_ms=7");
    EXPECT_EQ(options.lock_expiry, 5ms);
    EXPECT_EQ(options.lock_wait, 7ms);
    EXPECT_EQ(RemoteCacheOptions{}.lock_expiry, 20s);
    EXPECT_EQ(RemoteCacheOptions{}.lock_wait, 30s);
    EXPECT_THROW(RemoteCacheOptions::from_url("redis://h:1/0?lock_ms=-1"), InvalidArgumentError);
}

TEST(RemoteCompileLock, NoLockWhenTheExpiryIsZeroAndNoWaitForADeadServer) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache unlocked(RemoteCacheOptions::from_url(server.url("", "lock_ms=0")));
    const CompileTurn turn = unlocked.await_compile_turn(worker_key(1), [] { return std::nullopt; });
    EXPECT_FALSE(turn.lease);
    EXPECT_FALSE(exists(*raw_client(server), unlocked.redis_lock_key(worker_key(1))));

    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("", "timeout_ms=200")));
    server.kill();
    std::atomic<int> compiles{0};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(get_or_compile(cache, worker_key(2), counted(compiles, 2)), worker_code(2));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
    EXPECT_EQ(compiles.load(), 1);
    EXPECT_EQ(cache.counters().locks_acquired, 0u);
}

}  // namespace
