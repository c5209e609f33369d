// A cancelled compile stops waiting for another process's compile of the same key: against a real
// redis-server started on a free loopback port, a helper process holds the key's compile lease
// while this process compiles the same program with a token cancelled from another thread. The
// compile throws CompileCancelled soon after the cancel, takes no lock and stores nothing, and the
// helper's later entry is then found like any other. Every wait is bounded.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include "remote/redis_connection.hpp"

#include <sys/wait.h>

#include <atomic>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using test::RedisServer;

// How late a cancelled wait may return, measured from cancel(): the wait reads its token every
// 10 ms; the rest is room for a loaded machine. The lease is held far longer than this.
constexpr auto cancel_bound = 500ms;
constexpr auto lease_hold = 4000ms;

// The program the helper holds the lease of (tests/helpers/remote_cache_worker.cpp, --hold-lease).
Program lease_program() {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "leased";
    return Program("extern \"C\" __global__ void leased(int* x) { x[threadIdx.x] *= 3; }",
                   SourceType::cxx, options);
}

bool exists(const RedisServer& server, const std::string& key) {
    RemoteCacheOptions options;
    options.port = server.port();
    detail::RedisConnection client(options);
    return detail::reply_integer(*client.command({"EXISTS", key})) == 1;
}

// Cancels `token` after `delay` on a thread of its own; `cancelled_at` says when.
class DelayedCancel {
public:
    DelayedCancel(CancellationToken token, std::chrono::milliseconds delay)
        : thread_([this, token, delay] {
              std::this_thread::sleep_for(delay);
              cancelled_at_ = clock_type::now();
              token.cancel();
          }) {}
    ~DelayedCancel() { join(); }
    DelayedCancel(const DelayedCancel&) = delete;
    DelayedCancel& operator=(const DelayedCancel&) = delete;
    clock_type::time_point cancelled_at() {
        join();
        return cancelled_at_;
    }

private:
    void join() {
        if (thread_.joinable()) thread_.join();
    }
    clock_type::time_point cancelled_at_{};
    std::thread thread_;
};

// When `run` threw CompileCancelled, else a failure naming what happened.
clock_type::time_point cancelled_when(const std::function<void()>& run) {
    try {
        run();
        ADD_FAILURE() << "the compile was not cancelled";
    } catch (const CompileCancelled&) {
    } catch (const std::exception& e) {
        ADD_FAILURE() << "another exception: " << e.what();
    }
    return clock_type::now();
}

TEST(RemoteCompileCancel, ACancelledCompileStopsWaitingForAnotherProcesssLease) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url("", "lock_ms=60000&lock_wait_ms=60000");
    RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
    Program program = lease_program();
    const CacheKey key = cache_key(program, CodeType::ptx, {});
    const std::string lock = cache.redis_lock_key(key);

    const pid_t holder = test::spawn({test::helper_path("remote_cache_worker").string(), "--hold-lease",
                                      url, std::to_string(lease_hold.count())});
    ASSERT_TRUE(test::wait_until([&] { return exists(server, lock); }, 20s)) << "no lease taken";

    const std::uint64_t compiles_before = cache_stats().compiles;
    CancellationToken token;
    DelayedCancel cancel(token, 100ms);
    const auto returned = cancelled_when([&] {
        compile_cached(program, CodeType::ptx, {}, {.cache = &cache, .cancellation = token});
    });
    const auto late = returned - cancel.cancelled_at();
    EXPECT_LT(late, cancel_bound);
    RecordProperty("returned_after_cancel_us",
                   static_cast<int>(std::chrono::duration_cast<std::chrono::microseconds>(late).count()));
    EXPECT_EQ(cache_stats().compiles, compiles_before) << "a cancelled compile compiled";
    EXPECT_EQ(cache.counters().lock_waits, 1u);
    EXPECT_EQ(cache.counters().locks_acquired, 0u);
    EXPECT_TRUE(exists(server, lock)) << "the other process's lease was released by the waiter";
    EXPECT_FALSE(cache.get(key)) << "something was stored under the program's key";

    EXPECT_EQ(test::wait_for(holder), 0);
    // The holder's entry is found: no compile here.
    const ObjectCode code = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_GT(code.size(), 0u);
    EXPECT_EQ(cache_stats().compiles, compiles_before);
    EXPECT_FALSE(exists(server, lock));
}

// The turn itself, through a tiered cache (memory, then the server): a cancelled wait comes back
// cancelled with no lease and nothing found, and the owner's lock is left as it was.
TEST(RemoteCompileCancel, ATieredTurnComesBackCancelledHoldingNothing) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url("", "lock_ms=60000&lock_wait_ms=60000");
    RemoteProgramCache owner(RemoteCacheOptions::from_url(url));
    const CacheKey key = CacheKey::of_bytes("cancelled turn");
    CompileTurn held = owner.await_compile_turn(key, [] { return std::nullopt; });
    ASSERT_TRUE(held.lease);

    auto remote = std::make_shared<RemoteProgramCache>(RemoteCacheOptions::from_url(url));
    TieredProgramCache tiers({std::make_shared<MemoryProgramCache>(), remote});
    CancellationToken token;
    std::atomic<int> lookups{0};
    DelayedCancel cancel(token, 100ms);
    const CompileTurn turn = tiers.await_compile_turn(
        key, [&]() -> std::optional<ObjectCode> { ++lookups; return std::nullopt; }, token);
    EXPECT_LT(clock_type::now() - cancel.cancelled_at(), cancel_bound);
    EXPECT_TRUE(turn.cancelled);
    EXPECT_FALSE(turn.lease);
    EXPECT_FALSE(turn.found);
    EXPECT_GT(lookups.load(), 0);
    EXPECT_TRUE(exists(server, owner.redis_lock_key(key)));
    EXPECT_EQ(remote->counters().locks_acquired, 0u);

    // Cancelled before it starts: no wait, no lock tried, for the default turn too.
    MemoryProgramCache memory;
    EXPECT_TRUE(memory.await_compile_turn(key, [] { return std::nullopt; }, token).cancelled);
    EXPECT_TRUE(remote->await_compile_turn(key, [] { return std::nullopt; }, token).cancelled);
    EXPECT_EQ(remote->counters().lock_waits, 1u);
    held.lease.reset();
    EXPECT_FALSE(exists(server, owner.redis_lock_key(key)));
}

}  // namespace
