// RemoteProgramCache and TieredProgramCache against a real redis-server that each test starts on
// a free loopback port (and stops): round trips, sharing between processes, bad values, ACL
// users and wrong passwords, a server killed and restarted, a server that never answers, many
// threads, and tiers filled on a hit and written through.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "cache/cached_entry.hpp"
#include "remote/redis_connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using test::RedisServer;

CacheKey key_of(int n) { return CacheKey::of_bytes("remote key " + std::to_string(n)); }

// Bytes that differ from key to key, so a value returned under the wrong key is caught.
ObjectCode code_of(int n, std::size_t size = 100) {
    std::string bytes(size, '\0');
    for (std::size_t at = 0; at < size; ++at) bytes[at] = static_cast<char>((n * 131 + at) % 251);
    return ObjectCode::from_cubin(std::move(bytes), "code-" + std::to_string(n));
}

// Raw commands to the server, as another client (or an attacker with write access) would send.
class RawClient {
public:
    explicit RawClient(const RedisServer& server, std::string user = "", std::string password = "") {
        RemoteCacheOptions options;
        options.port = server.port();
        options.user = std::move(user);
        options.password = std::move(password);
        connection_ = std::make_unique<detail::RedisConnection>(options);
    }
    detail::RedisReply run(const std::vector<std::string_view>& arguments) {
        return connection_->command(arguments);
    }
    std::string text(const std::vector<std::string_view>& arguments) {
        auto reply = run(arguments);
        return std::string(detail::reply_text(*reply));
    }
    long long integer(const std::vector<std::string_view>& arguments) {
        auto reply = run(arguments);
        return detail::reply_integer(*reply);
    }

private:
    std::unique_ptr<detail::RedisConnection> connection_;
};

RemoteCacheOptions options_for(const RedisServer& server, const std::string& query = "") {
    return RemoteCacheOptions::from_url(server.url("", query));
}

// A socket listening on a free loopback port that accepts connections (into the kernel's backlog)
// and answers nothing itself; port 0 when it could not be made. Closed when it goes.
struct Listener {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int port = 0;
    Listener() {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0 && ::listen(fd, 16) == 0)
            port = ntohs(address.sin_port);
    }
    ~Listener() {
        if (fd >= 0) ::close(fd);
    }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
};

int count_kind(const test::WarningLog& log, WarningKind kind) {
    int count = 0;
    for (const auto& warning : log.seen) count += warning.kind == kind;
    return count;
}

// ---- URLs -------------------------------------------------------------------------------------

TEST(RemoteCacheUrl, ReadsEveryPart) {
    auto options = RemoteCacheOptions::from_url("redis://cache.example:7000/3");
    EXPECT_EQ(options.host, "cache.example");
    EXPECT_EQ(options.port, 7000);
    EXPECT_EQ(options.database, 3);
    EXPECT_TRUE(options.user.empty());
    EXPECT_TRUE(options.password.empty());

    options = RemoteCacheOptions::from_url("redis://127.0.0.1");
    EXPECT_EQ(options.port, 6379);
    EXPECT_EQ(options.database, 0);

    // Percent-encoded credentials are decoded; a password alone has an empty user.
    options = RemoteCacheOptions::from_url("redis://build%2Dbot:p%40ss%3Aw0rd@host:1/");
    EXPECT_EQ(options.user, "build-bot");
    EXPECT_EQ(options.password, "p@ss:w0rd");
    EXPECT_EQ(options.database, 0);
    options = RemoteCacheOptions::from_url("redis://:secret@host");
    EXPECT_TRUE(options.user.empty());
    EXPECT_EQ(options.password, "secret");

    options = RemoteCacheOptions::from_url("redis://[::1]:6380");
    EXPECT_EQ(options.host, "::1");
    EXPECT_EQ(options.port, 6380);
    EXPECT_EQ(options.display_url(), "redis://[::1]:6380/0");

    options = RemoteCacheOptions::from_url(
        "redis://h/1?connect_timeout_ms=50&timeout_ms=70&retry_ms=10&max_retry_ms=20&expiry_s=3600"
        "&prefix=team&max_entry_bytes=1000");
    EXPECT_EQ(options.connect_timeout, 50ms);
    EXPECT_EQ(options.operation_timeout, 70ms);
    EXPECT_EQ(options.retry_after, 10ms);
    EXPECT_EQ(options.max_retry_after, 20ms);
    EXPECT_EQ(options.expiry, 3600s);
    EXPECT_EQ(options.key_prefix, "team");
    EXPECT_EQ(options.max_entry_bytes, 1000u);
}

TEST(RemoteCacheUrl, RefusesWhatCannotWorkAndHidesThePassword) {
    auto refused = [](const std::string& url, std::initializer_list<const char*> parts) {
        SCOPED_TRACE(url);
        test::expect_invalid([&] { RemoteCacheOptions::from_url(url); }, parts);
    };
    refused("https://host", {"scheme", "redis://", "https"});
    refused("http://host", {"scheme", "http"});
    refused("redis:///0", {"no host"});
    refused("redis://host:0", {"port", "1..65535"});
    refused("redis://host:70000", {"port"});
    refused("redis://host/abc", {"database", "abc"});
    refused("redis://host/1/2", {"at most one database"});
    refused("redis://host?colour=blue", {"unknown option 'colour'"});
    refused("redis://host?timeout_ms=-1", {"timeout_ms"});
    refused("redis://host#frag", {"fragment"});
    refused("redis://user@host", {"needs a password"});
    refused("not a url at all", {"not a URL"});
    try {
        RemoteCacheOptions::from_url("redis://alice:hunter2@host:99999");
        ADD_FAILURE() << "accepted";
    } catch (const InvalidArgumentError& e) {
        EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("alice:***@host"), std::string::npos) << e.what();
    }
    // A password holding '/', '@' or ':' unescaped, or a URL without "://", is hidden whole.
    for (const auto& [url, secret] : {std::pair{"redis://:pa/ssw0rd@127.0.0.1:6393", "ssw0rd"},
                                      {"redis://u:p@ss@host:99999", "p@ss"},
                                      {"redis://u:p:w/d@host?nope=1", "p:w/d"},
                                      {"redis:/u:hunter3@host", "hunter3"}}) {
        try {
            RemoteCacheOptions::from_url(url);
            ADD_FAILURE() << url << " accepted";
        } catch (const InvalidArgumentError& e) {
            EXPECT_EQ(std::string(e.what()).find(secret), std::string::npos) << e.what();
        }
    }
    // Options that no URL can give are refused by the constructor.
    RemoteCacheOptions bad;
    bad.key_prefix = "a*b";
    EXPECT_THROW(RemoteProgramCache{bad}, InvalidArgumentError);
    bad = {};
    bad.operation_timeout = 0ms;
    EXPECT_THROW(RemoteProgramCache{bad}, InvalidArgumentError);
}

TEST(RemoteCacheUrl, FromTheEnvironment) {
    ::unsetenv("CUDACORE_REMOTE_CACHE");
    EXPECT_FALSE(RemoteCacheOptions::from_environment());
    ::setenv("CUDACORE_REMOTE_CACHE", "", 1);
    EXPECT_FALSE(RemoteCacheOptions::from_environment());
    ::setenv("CUDACORE_REMOTE_CACHE", "redis://envhost:1234/2", 1);
    auto options = RemoteCacheOptions::from_environment();
    ASSERT_TRUE(options);
    EXPECT_EQ(options->host, "envhost");
    EXPECT_EQ(options->port, 1234);
    EXPECT_EQ(options->database, 2);
    ::setenv("CUDACORE_REMOTE_CACHE", "rediss://envhost", 1);
    options = RemoteCacheOptions::from_environment();
    ASSERT_TRUE(options);
    EXPECT_TRUE(options->tls);
    ::setenv("CUDACORE_REMOTE_CACHE", "ftp://envhost", 1);
    EXPECT_THROW(RemoteCacheOptions::from_environment(), InvalidArgumentError);
    ::unsetenv("CUDACORE_REMOTE_CACHE");
}

// ---- A working server -------------------------------------------------------------------------

TEST(RemoteCache, RoundTripUnderAVersionedNamespacedKey) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server, "prefix=team-a"));
    EXPECT_FALSE(cache.get(key_of(1)));
    cache.put(key_of(1), code_of(1));
    const auto hit = cache.get(key_of(1));
    ASSERT_TRUE(hit);
    EXPECT_EQ(*hit, code_of(1));
    EXPECT_EQ(hit->name(), "code-1");

    const CacheStats stats = cache.stats();
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.insertions, 1u);
    EXPECT_EQ(stats.corrupt_entries, 0u);
    EXPECT_EQ(cache.counters().connections_opened, 1u);  // pooled

    const std::string name = cache.redis_key(key_of(1));
    EXPECT_EQ(name, "team-a:v" + std::to_string(ObjectCode::serialization_format_version) +
                        ".2:" + key_of(1).hex());
    RawClient raw(server);
    EXPECT_EQ(raw.integer({"EXISTS", name}), 1);
    EXPECT_EQ(raw.integer({"TTL", name}), -1);  // no expiry unless asked

    // The value is the sealed entry, byte for byte.
    EXPECT_EQ(raw.text({"GET", name}), RemoteProgramCache::encode_entry(key_of(1), code_of(1)));
    EXPECT_FALSE(cache.authenticated());
}

TEST(RemoteCache, ExpiryIsSetWhenAsked) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server, "expiry_s=3600"));
    cache.put(key_of(2), code_of(2));
    RawClient raw(server);
    const long long ttl = raw.integer({"TTL", cache.redis_key(key_of(2))});
    EXPECT_GT(ttl, 3500);
    EXPECT_LE(ttl, 3600);
}

TEST(RemoteCache, SharedBetweenProcesses) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url();
    // Another process stores; this one finds it, and the other way round.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        int status = 0;
        try {
            RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
            cache.put(key_of(10), code_of(10));
        } catch (...) {
            status = 1;
        }
        ::_exit(status);
    }
    ASSERT_EQ(test::wait_for(child), 0);
    RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
    const auto hit = cache.get(key_of(10));
    ASSERT_TRUE(hit);
    EXPECT_EQ(*hit, code_of(10));

    // A child fork()ed after the parent used the object goes on with connections of its own.
    const pid_t user = ::fork();
    ASSERT_GE(user, 0);
    if (user == 0) {
        int status = 0;
        try {
            const auto found = cache.get(key_of(10));
            cache.put(key_of(12), code_of(12));
            status = found && *found == code_of(10) ? 0 : 2;
        } catch (...) {
            status = 1;
        }
        ::_exit(status);
    }
    ASSERT_EQ(test::wait_for(user), 0);
    ASSERT_TRUE(cache.get(key_of(12)));  // the parent's pooled connection still works
    EXPECT_EQ(*cache.get(key_of(12)), code_of(12));

    // Two objects in one process behave as two processes do (nothing is shared but the server).
    RemoteProgramCache other(RemoteCacheOptions::from_url(url));
    other.put(key_of(11), code_of(11));
    ASSERT_TRUE(cache.get(key_of(11)));
    EXPECT_EQ(*cache.get(key_of(11)), code_of(11));

    // Another prefix is another namespace.
    RemoteProgramCache elsewhere(options_for(server, "prefix=elsewhere"));
    EXPECT_FALSE(elsewhere.get(key_of(10)));
}

TEST(RemoteCache, BadValuesAreCountedWarnedAboutAndNeverReturned) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server));
    RawClient raw(server);
    const std::string good = RemoteProgramCache::encode_entry(key_of(20), code_of(20, 4096));

    std::string flipped = good;
    flipped[flipped.size() / 2] ^= 0x20;
    std::string newer = good;
    newer[41 + 8] = 99;  // the serialized form's format version, after the entry header
    // Another key's whole value, with its key field overwritten by the key it is put under: what
    // anyone who can write to the server could do to swap code between keys.
    std::string swapped = RemoteProgramCache::encode_entry(key_of(21), code_of(21));
    const CacheKey planted = key_of(20);
    std::copy(planted.digest.begin(), planted.digest.end(), swapped.begin() + 9);
    struct Case {
        const char* what;
        std::string value;
        const char* warned;
    };
    const std::vector<Case> cases = {
        {"garbage", "not an entry at all", "not a remote cache entry"},
        {"empty", "", "not a remote cache entry"},
        {"truncated", good.substr(0, good.size() - 100), "checksum"},
        {"a flipped bit", flipped, "checksum"},
        {"a newer format version", newer, "checksum"},
        {"another key's entry", RemoteProgramCache::encode_entry(key_of(21), code_of(21)),
         "another key"},
        {"another key's entry, its key field rewritten", swapped, "checksum"},
        {"the disk cache's (unsealed) entry", DiskProgramCache::encode_entry(key_of(20), code_of(20)),
         "not a remote cache entry"},
        {"an entry sealed by a secret", RemoteProgramCache::encode_entry(key_of(20), code_of(20),
                                                                         "0123456789abcdef-secret"),
         "authenticated with a secret this cache does not have"},
    };
    std::uint64_t corrupt = 0;
    for (const Case& bad : cases) {
        SCOPED_TRACE(bad.what);
        test::WarningLog warnings;
        EXPECT_EQ(raw.text({"SET", cache.redis_key(key_of(20)), bad.value}), "OK");
        EXPECT_FALSE(cache.get(key_of(20)));
        EXPECT_EQ(cache.stats().corrupt_entries, ++corrupt);
        ASSERT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
        const std::string& message = warnings.seen.back().message;
        EXPECT_NE(message.find(bad.warned), std::string::npos) << message;
        EXPECT_NE(message.find(cache.redis_key(key_of(20))), std::string::npos) << message;
    }
    // A key holding another type (a list) is not an entry either.
    raw.run({"DEL", cache.redis_key(key_of(20))});
    raw.run({"LPUSH", cache.redis_key(key_of(20)), "x"});
    {
        test::WarningLog warnings;
        EXPECT_FALSE(cache.get(key_of(20)));
        ASSERT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
        EXPECT_NE(warnings.seen.back().message.find(cache.redis_key(key_of(20))), std::string::npos)
            << warnings.seen.back().message;
        EXPECT_NE(warnings.seen.back().message.find("another Redis type"), std::string::npos)
            << warnings.seen.back().message;
    }
    EXPECT_EQ(cache.stats().corrupt_entries, ++corrupt);
    EXPECT_EQ(cache.stats().hits, 0u);

    // The next put replaces the bad value.
    raw.run({"DEL", cache.redis_key(key_of(20))});
    EXPECT_EQ(raw.text({"SET", cache.redis_key(key_of(20)), "junk"}), "OK");
    cache.put(key_of(20), code_of(20, 4096));
    ASSERT_TRUE(cache.get(key_of(20)));
    EXPECT_EQ(*cache.get(key_of(20)), code_of(20, 4096));

    // A value larger than this cache accepts is not read as an entry (refused from the length
    // its reply announces), and is a failure like the others: the cache backs off.
    RemoteProgramCache small(options_for(server, "max_entry_bytes=1000"));
    test::WarningLog warnings;
    EXPECT_FALSE(small.get(key_of(20)));
    EXPECT_EQ(small.stats().corrupt_entries, 1u);
    ASSERT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
    EXPECT_NE(warnings.seen.back().message.find("max_entry_bytes (1000)"), std::string::npos)
        << warnings.seen.back().message;
    EXPECT_NE(warnings.seen.back().message.find(small.redis_key(key_of(20))), std::string::npos)
        << warnings.seen.back().message;
    EXPECT_FALSE(small.get(key_of(20)));
    EXPECT_EQ(small.counters().skipped, 1u);
    // A value of 4 MiB: a read or two of its start, not the value.
    RemoteProgramCache fresh(options_for(server, "max_entry_bytes=1000"));
    EXPECT_EQ(raw.text({"SET", fresh.redis_key(key_of(24)), std::string(4 << 20, 'v')}), "OK");
    EXPECT_FALSE(fresh.get(key_of(24)));
    EXPECT_EQ(fresh.stats().corrupt_entries, 1u);
    EXPECT_LT(fresh.counters().bytes_received, 64u << 10);
    fresh.put(key_of(22), code_of(22, 5000));  // too large: skipped, not a failure
    EXPECT_EQ(fresh.counters().oversized, 1u);
    EXPECT_EQ(fresh.stats().failed_stores, 0u);
    EXPECT_EQ(raw.integer({"EXISTS", fresh.redis_key(key_of(22))}), 0);
    // Values that fit are hits.
    RemoteProgramCache third(options_for(server, "max_entry_bytes=1000"));
    third.put(key_of(23), code_of(23));
    EXPECT_EQ(third.get(key_of(23)), code_of(23));
}

TEST(RemoteCache, ClearRemovesOnlyItsNamespace) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server, "prefix=mine"));
    RemoteProgramCache other(options_for(server, "prefix=theirs"));
    for (int i = 0; i < 50; ++i) cache.put(key_of(i), code_of(i));
    other.put(key_of(0), code_of(0));
    // A prefix that begins with this one: another cache's namespace, not this one's.
    RemoteProgramCache nested(options_for(server, "prefix=mine:v2"));
    nested.put(key_of(0), code_of(0));
    RawClient raw(server);
    const std::string legacy = "mine:v999:" + key_of(1).hex();
    raw.run({"SET", legacy, "x"});  // another format version: still ours
    for (const char* unrelated : {"mine-unrelated", "mine:v1:user-sessions", "mine:v1.2:short"})
        raw.run({"SET", unrelated, "x"});
    EXPECT_EQ(cache.server_entries(), 51u);
    cache.clear();
    EXPECT_EQ(cache.server_entries(), 0u);
    EXPECT_EQ(raw.integer({"EXISTS", legacy}), 0);
    EXPECT_FALSE(cache.get(key_of(3)));
    EXPECT_TRUE(other.get(key_of(0)));
    EXPECT_TRUE(nested.get(key_of(0)));
    for (const char* unrelated : {"mine-unrelated", "mine:v1:user-sessions", "mine:v1.2:short"})
        EXPECT_EQ(raw.integer({"EXISTS", unrelated}), 1) << unrelated;

    // A cache that reads small replies (max_entry_bytes) scans in calls whose replies fit.
    RemoteProgramCache small(options_for(server, "prefix=small&max_entry_bytes=1000"));
    for (int i = 0; i < 3000; ++i) raw.run({"SET", small.redis_key(key_of(i)), "x"});
    EXPECT_EQ(small.server_entries(), 3000u);
    small.clear();
    EXPECT_EQ(small.server_entries(), 0u);
}

// A server (or something in its place) whose SCAN never ends: clear() and server_entries() give
// up with a CacheError after a bound the database's size sets, rather than asking forever.
TEST(RemoteCache, AScanThatNeverEndsIsGivenUp) {
    const Listener listening;
    ASSERT_GT(listening.port, 0);
    const int listener = listening.fd;
    std::atomic<int> scans{0};
    // Answers each command of each connection: DBSIZE with 0, SCAN with the cursor 5 and no keys,
    // anything else with +OK. Commands arrive as RESP arrays of bulk strings.
    std::thread fake([&] {
        for (int connections = 0; connections < 2; ++connections) {
            const int client = ::accept(listener, nullptr, nullptr);
            if (client < 0) return;
            std::string pending;
            char chunk[4096];
            for (ssize_t got; (got = ::read(client, chunk, sizeof chunk)) > 0;) {
                pending.append(chunk, static_cast<std::size_t>(got));
                for (;;) {  // every whole command in `pending`
                    std::size_t at = pending.find("\r\n");
                    if (pending.empty() || pending[0] != '*' || at == std::string::npos) break;
                    const int count = std::atoi(pending.c_str() + 1);
                    std::vector<std::string> words;
                    std::size_t next = at + 2;
                    for (int i = 0; i < count; ++i) {
                        const std::size_t end = pending.find("\r\n", next);
                        if (end == std::string::npos) break;
                        const std::size_t size = std::strtoul(pending.c_str() + next + 1, nullptr, 10);
                        if (pending.size() < end + 2 + size + 2) break;
                        words.push_back(pending.substr(end + 2, size));
                        next = end + 2 + size + 2;
                    }
                    if (static_cast<int>(words.size()) != count) break;
                    pending.erase(0, next);
                    std::string reply = "+OK\r\n";
                    if (words[0] == "DBSIZE") reply = ":0\r\n";
                    if (words[0] == "SCAN") {
                        ++scans;
                        reply = "*2\r\n$1\r\n5\r\n*0\r\n";
                    }
                    if (::write(client, reply.data(), reply.size()) < 0) break;
                }
            }
            ::close(client);
        }
    });
    test::WarningLog quiet;
    {
        RemoteProgramCache cache(RemoteCacheOptions::from_url(
            "redis://127.0.0.1:" + std::to_string(listening.port) + "?timeout_ms=2000"));
        try {
            cache.server_entries();
            ADD_FAILURE() << "an endless SCAN was followed to its end";
        } catch (const CacheError& e) {
            EXPECT_NE(std::string(e.what()).find("did not end"), std::string::npos) << e.what();
        }
        EXPECT_THROW(cache.clear(), CacheError);
    }
    EXPECT_LE(scans.load(), 2 * 68);
    ::shutdown(listener, SHUT_RDWR);
    fake.join();
}

// ---- Credentials ------------------------------------------------------------------------------

TEST(RemoteCache, AclUserAndWrongPassword) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server(
        "user default off\n"
        "user builder on >right-password ~cudacore:* +@all\n");
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("builder:right-password")));
    cache.put(key_of(30), code_of(30));
    ASSERT_TRUE(cache.get(key_of(30)));

    test::WarningLog warnings;
    RemoteProgramCache wrong(RemoteCacheOptions::from_url(
        server.url("builder:wrong-password", "retry_ms=60000")));
    EXPECT_THROW(wrong.put(key_of(31), code_of(31)), CacheError);  // tried, refused
    EXPECT_FALSE(wrong.get(key_of(30)));  // backing off: a miss, not an exception
    ASSERT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
    const std::string message = warnings.seen.back().message;
    EXPECT_NE(message.find("AUTH"), std::string::npos) << message;
    EXPECT_NE(message.find("WRONGPASS"), std::string::npos) << message;
    EXPECT_EQ(message.find("wrong-password"), std::string::npos) << message;
    EXPECT_EQ(wrong.counters().connection_failures, 1u);
}

TEST(RemoteCache, BackOffAfterAFailureSkipsTheServer) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server("user default off\nuser builder on >pw ~* +@all\n");
    test::WarningLog warnings;
    RemoteProgramCache wrong(RemoteCacheOptions::from_url(server.url("builder:nope", "retry_ms=60000")));
    EXPECT_FALSE(wrong.get(key_of(1)));
    EXPECT_EQ(wrong.counters().connection_failures, 1u);
    // Backing off: nothing is tried, nothing thrown, nothing reported again.
    for (int i = 0; i < 20; ++i) {
        EXPECT_FALSE(wrong.get(key_of(i)));
        EXPECT_NO_THROW(wrong.put(key_of(i), code_of(i)));
    }
    EXPECT_EQ(wrong.counters().connection_failures, 1u);
    EXPECT_EQ(wrong.counters().skipped, 40u);
    EXPECT_EQ(wrong.stats().failed_stores, 20u);
    EXPECT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
}

TEST(RemoteCache, AclDenialIsAServerErrorNotAnOutage) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server("user default off\nuser reader on >pw ~cudacore:* +get +auth +select\n");
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("reader:pw")));
    EXPECT_FALSE(cache.get(key_of(1)));
    try {
        cache.put(key_of(1), code_of(1));
        ADD_FAILURE() << "put did not throw";
    } catch (const CacheError& e) {
        EXPECT_NE(std::string(e.what()).find("NOPERM"), std::string::npos) << e.what();
    }
    EXPECT_EQ(cache.stats().failed_stores, 1u);
    EXPECT_EQ(cache.counters().server_errors, 1u);
    // Not backed off: the next put is tried (and refused) again, reported once.
    EXPECT_THROW(cache.put(key_of(2), code_of(2)), CacheError);
    EXPECT_EQ(cache.counters().server_errors, 2u);
    EXPECT_EQ(cache.counters().skipped, 0u);
    EXPECT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
}

// ---- A server that fails ----------------------------------------------------------------------

TEST(RemoteCache, ServerKilledMidUseThenRestarted) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::WarningLog warnings;
    RemoteProgramCache cache(options_for(server, "retry_ms=50&max_retry_ms=200"));
    for (int i = 0; i < 8; ++i) cache.put(key_of(i), code_of(i));
    ASSERT_TRUE(cache.get(key_of(0)));

    server.kill();
    // Misses, never an exception out of get(); compiles through the cache still return code.
    EXPECT_FALSE(cache.get(key_of(1)));
    std::vector<std::string> reported;
    for (int i = 0; i < 8; ++i) {
        const ObjectCode code = get_or_compile(
            cache, key_of(100 + i), [&] { return code_of(100 + i); },
            [&](const CacheError& e) { reported.push_back(e.what()); });
        EXPECT_EQ(code, code_of(100 + i));
    }
    EXPECT_GE(count_kind(warnings, WarningKind::remote_cache_failed), 1);
    EXPECT_LE(reported.size(), 8u);

    server.start();  // empty: it kept nothing
    // Back within the back-off (at most 200 ms): retried, and working again. Bounded loop.
    bool back = false;
    for (int attempt = 0; attempt < 100 && !back; ++attempt) {
        try {
            cache.put(key_of(200), code_of(200));
        } catch (const CacheError&) {
        }
        back = cache.get(key_of(200)).has_value();
        if (!back) std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(back);
    EXPECT_EQ(*cache.get(key_of(200)), code_of(200));
    EXPECT_FALSE(cache.get(key_of(0)));  // lost with the old server, never invented
}

TEST(RemoteCache, CompileCachedNeverFailsForADeadServer) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server));
    server.kill();
    ProgramOptions options;
    options.arch = "sm_90";
    Program program(R"(extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2; })",
                    SourceType::cxx, options);
    std::optional<ObjectCode> code;
    EXPECT_NO_THROW(code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache}));
    ASSERT_TRUE(code);
    EXPECT_GT(code->size(), 0u);
    EXPECT_EQ(cache.stats().hits, 0u);
}

TEST(RemoteCache, ServerKilledDuringARunOfEightProcesses) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url("", "retry_ms=20&max_retry_ms=100&timeout_ms=500");
    std::vector<pid_t> workers;
    for (int p = 0; p < 8; ++p) {
        workers.push_back(test::spawn(
            {test::helper_path("remote_cache_worker").string(), url, "4", "600", "16"}));
    }
    std::this_thread::sleep_for(400ms);
    server.kill();
    std::this_thread::sleep_for(200ms);
    server.start();
    // Every worker ends within a minute (each makes 2400 calls), with every code right.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    std::vector<int> statuses(workers.size(), -1000);
    std::size_t done = 0;
    while (done < workers.size() && std::chrono::steady_clock::now() < deadline) {
        for (std::size_t i = 0; i < workers.size(); ++i) {
            int status = 0;
            if (statuses[i] == -1000 && ::waitpid(workers[i], &status, WNOHANG) == workers[i]) {
                statuses[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
                ++done;
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    for (std::size_t i = 0; i < workers.size(); ++i) {
        if (statuses[i] == -1000) {
            ::kill(workers[i], SIGKILL);
            ::waitpid(workers[i], nullptr, 0);
        }
        EXPECT_EQ(statuses[i], 0) << "worker " << i << " (3: wrong code, 1: an exception, "
                                  << "-1000: still running after a minute)";
    }
    // The restarted server holds only complete, right entries (the workers' keys and codes).
    RemoteProgramCache check(RemoteCacheOptions::from_url(server.url()));
    EXPECT_GT(check.server_entries(), 0u);
    for (int i = 0; i < 16; ++i) {
        std::string bytes(2000 + i, '\0');
        for (std::size_t at = 0; at < bytes.size(); ++at)
            bytes[at] = static_cast<char>((i * 131 + at) % 251);
        const auto found = check.get(CacheKey::of_bytes("fleet key " + std::to_string(i)));
        if (found) EXPECT_EQ(*found, ObjectCode::from_cubin(bytes, "fleet-" + std::to_string(i)));
    }
    EXPECT_GT(check.stats().hits, 0u);
    EXPECT_EQ(check.stats().corrupt_entries, 0u);
}

TEST(RemoteCache, AFullServerFailsStoresNotCompiles) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server("maxmemory 3mb\nmaxmemory-policy noeviction\n");
    test::WarningLog warnings;
    RemoteProgramCache cache(options_for(server));
    int refused = 0;
    for (int i = 0; i < 40; ++i) {
        std::vector<std::string> reported;
        const ObjectCode code = get_or_compile(
            cache, key_of(i), [&] { return code_of(i, 512 << 10); },
            [&](const CacheError& e) { reported.push_back(e.what()); });
        EXPECT_EQ(code, code_of(i, 512 << 10));
        if (!reported.empty()) {
            ++refused;
            EXPECT_NE(reported[0].find("OOM"), std::string::npos) << reported[0];
        }
    }
    EXPECT_GT(refused, 0);
    EXPECT_EQ(cache.stats().failed_stores, static_cast<std::uint64_t>(refused));
    EXPECT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
    // What it did store is still served.
    EXPECT_EQ(cache.get(key_of(0)), code_of(0, 512 << 10));
}

// A reset during a write raises SIGPIPE in the writer; its default action would end the
// process. The child keeps the default disposition and must survive.
TEST(RemoteCache, PeerResetDuringAWriteDoesNotRaiseSigpipe) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    const std::string url = server.url();
    const int port = server.port();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
        int status = 0;
        try {
            RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
            cache.put(key_of(1), code_of(1));  // a pooled connection
            RemoteCacheOptions admin;
            admin.port = port;
            for (int round = 0; round < 3; ++round) {
                // The server closes the pooled connection; the next put writes 8 MiB into it.
                detail::RedisConnection killer(admin);
                killer.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
                cache.put(key_of(2 + round), code_of(2 + round, 8 << 20));
            }
            // The stale connection was replaced: the puts arrived.
            status = cache.get(key_of(4)) == code_of(4, 8 << 20) ? 0 : 2;
        } catch (...) {
            status = 1;
        }
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) status = 3;  // none left behind
        ::_exit(status);
    }
    const int status = test::wait_for(child);
    EXPECT_NE(status, -SIGPIPE) << "killed by SIGPIPE";
    EXPECT_EQ(status, 0);
}

TEST(RemoteCache, AServerThatNeverAnswersCostsOneTimeout) {
    // A listener that accepts connections (in the kernel's backlog) and never replies.
    const Listener listening;
    ASSERT_GT(listening.port, 0);
    const int listener = listening.fd;
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(
        "redis://127.0.0.1:" + std::to_string(listening.port) +
        "?timeout_ms=100&retry_ms=60000"));
    EXPECT_FALSE(cache.get(key_of(1)));
    EXPECT_EQ(cache.counters().command_failures, 1u);
    for (int i = 0; i < 10; ++i) EXPECT_FALSE(cache.get(key_of(i)));
    EXPECT_EQ(cache.counters().skipped, 10u);
    ASSERT_EQ(count_kind(warnings, WarningKind::remote_cache_failed), 1);
    EXPECT_NE(warnings.seen.back().message.find("timeout"), std::string::npos)
        << warnings.seen.back().message;
}

// ---- Threads ----------------------------------------------------------------------------------

TEST(RemoteCache, ManyThreadsAtOnce) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(options_for(server));
    RemoteProgramCache second(options_for(server));
    std::atomic<int> wrong{0}, thrown{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 16; ++t) {
        threads.emplace_back([&, t] {
            RemoteProgramCache& mine = t % 2 ? cache : second;
            for (int i = 0; i < 100; ++i) {
                const int k = (t * 7 + i) % 24;
                try {
                    if (i % 3 == 0) {
                        mine.put(key_of(k), code_of(k, 1000 + k));
                    } else if (auto hit = mine.get(key_of(k)); hit && *hit != code_of(k, 1000 + k)) {
                        ++wrong;
                    }
                } catch (...) {
                    ++thrown;
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(thrown.load(), 0);
    EXPECT_EQ(cache.stats().corrupt_entries + second.stats().corrupt_entries, 0u);
    EXPECT_GT(cache.stats().hits + second.stats().hits, 0u);
    // Connections are pooled: at most one per thread using the object at once.
    EXPECT_LE(cache.counters().connections_opened, 16u);
    EXPECT_EQ(cache.counters().connection_failures, 0u);
}

// ---- Tiers ------------------------------------------------------------------------------------

TEST(TieredCache, RemoteHitFillsTheTiersAboveAndPutWritesThrough) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::TempDir dir;
    auto remote = std::make_shared<RemoteProgramCache>(options_for(server));
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "first");
    TieredProgramCache tiered({memory, disk, remote});

    tiered.put(key_of(1), code_of(1));
    EXPECT_EQ(tiered.stats().insertions, 1u);
    EXPECT_EQ(memory->get(key_of(1)), code_of(1));
    EXPECT_EQ(disk->get(key_of(1)), code_of(1));
    EXPECT_EQ(remote->get(key_of(1)), code_of(1));

    // Another machine: empty memory and disk, the same server.
    auto memory2 = std::make_shared<MemoryProgramCache>();
    auto disk2 = std::make_shared<DiskProgramCache>(dir.path() / "second");
    TieredProgramCache other({memory2, disk2, remote});
    EXPECT_EQ(other.get(key_of(1)), code_of(1));
    EXPECT_EQ(other.tier_hits(), (std::vector<std::uint64_t>{0, 0, 1}));
    EXPECT_EQ(memory2->stats().entries, 1u);
    EXPECT_EQ(disk2->stats().entries, 1u);
    EXPECT_EQ(other.get(key_of(1)), code_of(1));
    EXPECT_EQ(other.tier_hits(), (std::vector<std::uint64_t>{1, 0, 1}));

    // A disk hit fills memory only.
    TieredProgramCache restarted({std::make_shared<MemoryProgramCache>(), disk2, remote});
    EXPECT_EQ(restarted.get(key_of(1)), code_of(1));
    EXPECT_EQ(restarted.get(key_of(1)), code_of(1));
    EXPECT_EQ(restarted.tier_hits(), (std::vector<std::uint64_t>{1, 1, 0}));
    EXPECT_FALSE(other.get(key_of(99)));
    EXPECT_EQ(other.stats().misses, 1u);
    EXPECT_EQ(other.stats().hits, 2u);

    EXPECT_THROW(TieredProgramCache({}), InvalidArgumentError);
    EXPECT_THROW(TieredProgramCache({memory, memory}), InvalidArgumentError);
    EXPECT_THROW(TieredProgramCache({memory, nullptr}), InvalidArgumentError);
}

TEST(TieredCache, ADeadRemoteTierLeavesTheOthersWorking) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::TempDir dir;
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "cache");
    auto remote = std::make_shared<RemoteProgramCache>(options_for(server, "retry_ms=60000"));
    TieredProgramCache tiered({memory, disk, remote});
    server.kill();
    try {
        tiered.put(key_of(5), code_of(5));
        ADD_FAILURE() << "a failed tier is reported";
    } catch (const CacheError& e) {
        EXPECT_NE(std::string(e.what()).find("tier 2"), std::string::npos) << e.what();
    }
    EXPECT_EQ(tiered.stats().failed_stores, 1u);
    EXPECT_EQ(memory->get(key_of(5)), code_of(5));
    EXPECT_EQ(disk->get(key_of(5)), code_of(5));
    EXPECT_EQ(tiered.get(key_of(5)), code_of(5));
    EXPECT_FALSE(tiered.get(key_of(6)));
    // Backing off now: a put skips the remote tier quietly.
    EXPECT_NO_THROW(tiered.put(key_of(7), code_of(7)));

    // Accepted wherever a cache is: compile_cached through the tiers, with the remote dead.
    ProgramOptions options;
    options.arch = "sm_90";
    Program program(R"(extern "C" __global__ void inc(int* x) { x[threadIdx.x] += 1; })",
                    SourceType::cxx, options);
    const ObjectCode compiled = compile_cached(program, CodeType::cubin, {}, {.cache = &tiered});
    Program again(R"(extern "C" __global__ void inc(int* x) { x[threadIdx.x] += 1; })",
                  SourceType::cxx, options);
    EXPECT_EQ(compile_cached(again, CodeType::cubin, {}, {.cache = &tiered}), compiled);
    EXPECT_GE(tiered.tier_hits()[0], 2u);  // the header list and the code, from memory
}

TEST(TieredCache, CompileManyThroughTheTiers) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    auto remote = std::make_shared<RemoteProgramCache>(options_for(server));
    const std::string source =
        "template <int N> __global__ void add(int* x) { x[threadIdx.x] += N; }\n";
    const std::vector<std::vector<std::string>> names = {{"add<1>"}, {"add<2>"}, {"add<3>"}};
    ProgramOptions options;
    options.arch = "sm_90";
    CompileOptions many;
    TieredProgramCache first({std::make_shared<MemoryProgramCache>(), remote});
    many.cache = &first;
    const auto compiled = compile_many(source, options, CodeType::cubin, names, many);
    EXPECT_EQ(remote->stats().insertions, 3u);  // the code of each program, under its first key

    TieredProgramCache second({std::make_shared<MemoryProgramCache>(), remote});
    many.cache = &second;
    const auto found = compile_many(source, options, CodeType::cubin, names, many);
    ASSERT_EQ(found.size(), compiled.size());
    for (std::size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i].code(), compiled[i].code());
    EXPECT_EQ(second.tier_hits(), (std::vector<std::uint64_t>{0, 3}));
}

TEST(TieredCache, CompileCachedAcrossMachinesThroughTheRemoteTier) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    test::TempDir dir;
    auto remote = std::make_shared<RemoteProgramCache>(options_for(server));
    const char* source = R"(extern "C" __global__ void add(int* x) { x[threadIdx.x] += 3; })";
    ProgramOptions options;
    options.arch = "sm_90";
    Program first(source, SourceType::cxx, options);
    TieredProgramCache machine_a({std::make_shared<MemoryProgramCache>(),
                                  std::make_shared<DiskProgramCache>(dir.path() / "a"), remote});
    const ObjectCode compiled = compile_cached(first, CodeType::cubin, {}, {.cache = &machine_a});

    auto memory_b = std::make_shared<MemoryProgramCache>();
    TieredProgramCache machine_b(
        {memory_b, std::make_shared<DiskProgramCache>(dir.path() / "b"), remote});
    Program second(source, SourceType::cxx, options);
    const auto found = find_cached(second, CodeType::cubin, {}, {.cache = &machine_b});
    ASSERT_TRUE(found);
    EXPECT_EQ(found->code(), compiled.code());
    EXPECT_EQ(machine_b.tier_hits()[2], 1u);  // the code, under its first key
    EXPECT_EQ(memory_b->stats().entries, 1u);  // copied into the faster tiers
}

// The remote tier's events in cache_stats(), under "remote": a hit, a miss and a store, then a
// get the dead server fails (a miss and a failure) and a put skipped while backing off (a failure).
TEST(RemoteCache, CountsHitsMissesStoresAndFailuresInCacheStats) {
    CUDACORE_REQUIRE_REDIS();
    RedisServer server;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url("", "timeout_ms=300")));
    reset_cache_stats();
    auto expect_remote = [](std::uint64_t hits, std::uint64_t misses, std::uint64_t stores,
                            std::uint64_t failures) {
        const TierActivity remote = cache_stats().tier("remote");
        EXPECT_EQ(remote.hits, hits);
        EXPECT_EQ(remote.misses, misses);
        EXPECT_EQ(remote.stores, stores);
        EXPECT_EQ(remote.failures, failures);
    };
    EXPECT_FALSE(cache.get(key_of(7)));
    cache.put(key_of(7), code_of(7));
    EXPECT_EQ(cache.get(key_of(7)), code_of(7));
    expect_remote(1, 1, 1, 0);
    server.kill();
    EXPECT_FALSE(cache.get(key_of(7)));
    EXPECT_NO_THROW(cache.put(key_of(8), code_of(8)));
    expect_remote(1, 2, 1, 2);
}

}  // namespace
