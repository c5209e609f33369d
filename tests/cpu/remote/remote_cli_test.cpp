// The CLI's --remote options against a real redis-server each test starts on a free loopback port
// (or a fake one that misbehaves): a cache shared between machines, a store refused, a server down
// or misnamed, one that trickles, and entries authenticated with a secret.
#include "cli_cache_fixture.hpp"
#include "fake_redis_server.hpp"
#include "redis_server.hpp"
#include "test_support.hpp"

#include <chrono>

namespace {

using cudacore::test::cli_path;
using cudacore::test::CliCache;
using cudacore::test::read_file;
using cudacore::test::run_process;

// The remote tier: a compile on one "machine" (its own disk cache) is a hit on another that
// shares only the Redis server; `cache stats|clear --remote` count and clear its entries.
TEST_F(CliCache, RemoteCacheSharedBetweenMachines) {
    CUDACORE_REQUIRE_REDIS();
    cudacore::test::RedisServer server;
    const std::string url = server.url();
    env["CUDACORE_CACHE_DIR"] = (dir.path() / "machine-a").string();
    const auto first = compile((dir.path() / "1.cubin").string(), {"--remote", url});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.err.find("cache hit"), std::string::npos) << first.err;

    env["CUDACORE_CACHE_DIR"] = (dir.path() / "machine-b").string();
    env["CUDACORE_REMOTE_CACHE"] = url;  // the environment names it this time
    const auto second = compile((dir.path() / "2.cubin").string());
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("cache hit"), std::string::npos) << second.err;
    EXPECT_EQ(read_file(dir.path() / "1.cubin"), read_file(dir.path() / "2.cubin"));

    const auto stats = cli({"cache", "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    EXPECT_NE(stats.out.find("remote entries 1"), std::string::npos) << stats.out;
    EXPECT_NE(stats.out.find("entries    1"), std::string::npos) << stats.out;  // filled on the hit
    env["CUDACORE_REMOTE_CACHE"] = "";
    const auto clear = cli({"cache", "clear", "--remote", url});
    ASSERT_EQ(clear.exit_code, 0) << clear.err;
    EXPECT_NE(clear.out.find("removed 1 entries from redis://"), std::string::npos) << clear.out;
    const auto after = cli({"cache", "--remote", url, "stats"});
    EXPECT_NE(after.out.find("remote entries 0"), std::string::npos) << after.out;
}

// A server that refuses every store (an ACL user allowed only GET): the code is compiled and
// kept on disk, and the refusal is one warning (not one from the cache and one from the compile).
TEST_F(CliCache, RemoteStoreRefusedIsOneWarning) {
    CUDACORE_REQUIRE_REDIS();
    cudacore::test::RedisServer server(
        "user default off\nuser reader on >pw ~cudacore:* +get +auth +select\n");
    const auto result =
        compile((dir.path() / "1.cubin").string(), {"--remote", server.url("reader:pw")});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::size_t warnings = 0;
    for (std::size_t at = result.err.find("warning"); at != std::string::npos;
         at = result.err.find("warning", at + 1))
        ++warnings;
    EXPECT_EQ(warnings, 1u) << result.err;
    EXPECT_NE(result.err.find("NOPERM"), std::string::npos) << result.err;
}

TEST_F(CliCache, RemoteCacheDownOrMisnamed) {
    CUDACORE_REQUIRE_REDIS();
    std::string url;
    {
        cudacore::test::RedisServer server;
        url = server.url();
    }  // stopped: nothing listens there now
    const auto result = compile((dir.path() / "1.cubin").string(), {"--remote", url});
    ASSERT_EQ(result.exit_code, 0) << result.err;  // compiled all the same
    EXPECT_NE(result.err.find("warning: RemoteProgramCache: cannot connect"), std::string::npos)
        << result.err;
    const auto stats = cli({"cache", "stats", "--remote", url});
    EXPECT_NE(stats.exit_code, 0);
    // A TLS server that is not there: a rediss:// URL is taken, and the failure names it.
    const auto tls = cli({"cache", "stats", "--remote", "rediss://127.0.0.1:1"});
    EXPECT_NE(tls.exit_code, 0);
    EXPECT_NE(tls.err.find("rediss://127.0.0.1:1"), std::string::npos) << tls.err;
    const auto bad = compile((dir.path() / "3.cubin").string(), {"--remote", "http://host"});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("scheme"), std::string::npos) << bad.err;
}

// A server that trickles its reply a byte at a time (`$100000`, a byte every 50 ms: over an hour
// if only each read were bounded): `cudacore compile --remote` compiles within the bound and a
// compile's time (a generous limit, not a benchmark; the child is killed past it).
TEST_F(CliCache, RemoteServerThatTricklesDoesNotHoldTheCompile) {
    using namespace std::chrono_literals;
    cudacore::test::FakeRedisServer server({cudacore::test::FakeRedisServer::Behaviour::trickle,
                                            "$100000\r\n" + std::string(100000, 'x') + "\r\n", 50ms});
    std::vector<std::string> args{cli_path().string(), "compile", source, "-o",
                                  (dir.path() / "1.cubin").string(), "--arch", "sm_90",
                                  "--name-expr", "scale<float>", "--remote",
                                  server.url("timeout_ms=300&connect_timeout_ms=300")};
    cudacore::test::ProcessLimits limits;
    limits.timeout_seconds = 120;
    const auto start = std::chrono::steady_clock::now();
    const auto result = run_process(args, env, limits);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
    EXPECT_NE(result.err.find("warning: RemoteProgramCache"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("timeout"), std::string::npos) << result.err;
    EXPECT_GE(server.connections(), 1u);
}

// --remote-secret-file / --remote-secret-env: entries stored with a secret are hits only for
// clients with the same secret; a client without it compiles, with a warning saying why.
TEST_F(CliCache, RemoteSecretAuthenticatesEntries) {
    CUDACORE_REQUIRE_REDIS();
    cudacore::test::RedisServer server;
    const std::string url = server.url();
    const std::string secret = (dir.path() / "cache.key").string();
    cudacore::test::write_file(secret, "0123456789abcdef0123456789abcdef\n");
    env["CUDACORE_CACHE_DIR"] = (dir.path() / "machine-a").string();
    const auto first = compile((dir.path() / "1.cubin").string(),
                               {"--remote", url, "--remote-secret-file", secret});
    ASSERT_EQ(first.exit_code, 0) << first.err;

    env["CUDACORE_CACHE_DIR"] = (dir.path() / "machine-c").string();
    env["FLEET_CACHE_SECRET"] = "0123456789abcdef0123456789abcdef";
    const auto with = compile((dir.path() / "3.cubin").string(),
                              {"--remote", url, "--remote-secret-env", "FLEET_CACHE_SECRET"});
    ASSERT_EQ(with.exit_code, 0) << with.err;
    EXPECT_NE(with.err.find("cache hit"), std::string::npos) << with.err;
    EXPECT_EQ(read_file(dir.path() / "1.cubin"), read_file(dir.path() / "3.cubin"));

    env["CUDACORE_CACHE_DIR"] = (dir.path() / "machine-b").string();
    // (Its own store then replaces the entry with an unsealed one: a fleet shares one secret.)
    const auto without = compile((dir.path() / "2.cubin").string(), {"--remote", url});
    ASSERT_EQ(without.exit_code, 0) << without.err;
    EXPECT_EQ(without.err.find("cache hit"), std::string::npos) << without.err;
    EXPECT_NE(without.err.find("secret"), std::string::npos) << without.err;

    // A secret that cannot be read is an error, not a cache that runs unauthenticated.
    const auto missing = compile((dir.path() / "4.cubin").string(),
                                 {"--remote", url, "--remote-secret-file", secret + ".absent"});
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.err.find("cache.key.absent"), std::string::npos) << missing.err;
}

}  // namespace
