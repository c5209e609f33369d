// RemoteProgramCache against servers that misbehave (FakeRedisServer: a real redis-server cannot
// be made to): one that trickles its reply a byte at a time, stalls, resets the connection in the
// middle of a reply, answers with bytes that are not Redis's protocol, announces a huge value or
// an array of countless small elements, or never ends its reply, a TLS server whose handshake
// trickles, and a resolver that does not answer. Each call returns within its bound
// (connect_timeout + operation_timeout, with generous slack) as a miss with a warning, the compile
// through the cache succeeds, and a huge reply is never read whole nor costs more memory than
// max_entry_bytes.
#include "fake_redis_server.hpp"
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include <dlfcn.h>
#include <netdb.h>
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>

// A resolver that does not answer, for one name: this program's getaddrinfo (found before the C
// library's) holds a lookup of `stalled_name` until the test lets it go (or 10 s have passed),
// then fails it; every other name goes on to the C library's.
namespace {
constexpr char stalled_name[] = "stalled-resolver.cudacore.test";
std::mutex resolver_mutex;
std::condition_variable resolver_released;
bool resolver_stalls = false;
std::atomic<int> stalled_lookups{0};  // lookups of stalled_name asked for

// Makes the resolver stall for `stalled_name` while it lives.
struct StalledResolver {
    StalledResolver() {
        const std::lock_guard lock(resolver_mutex);
        resolver_stalls = true;
    }
    ~StalledResolver() {
        const std::lock_guard lock(resolver_mutex);
        resolver_stalls = false;
        resolver_released.notify_all();
    }
};
}  // namespace

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                           addrinfo** found) {
    if (node != nullptr && std::strcmp(node, stalled_name) == 0) {
        ++stalled_lookups;
        std::unique_lock lock(resolver_mutex);
        resolver_released.wait_for(lock, std::chrono::seconds(10), [] { return !resolver_stalls; });
        return EAI_AGAIN;
    }
    using Lookup = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
    static const auto next = reinterpret_cast<Lookup>(::dlsym(RTLD_NEXT, "getaddrinfo"));
    return next(node, service, hints, found);
}

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using test::FakeRedisServer;
using Behaviour = FakeRedisServer::Behaviour;
using Clock = std::chrono::steady_clock;

// Each exchange is bounded by connect_timeout + operation_timeout: 600 ms here.
const std::string bounds = "connect_timeout_ms=300&timeout_ms=300&retry_ms=60000";
constexpr auto bound = 600ms;
constexpr auto slack_bound = 3 * bound;  // a generous bound on a loaded machine, not a benchmark

CacheKey key_of(int n) { return CacheKey::of_bytes("bounded key " + std::to_string(n)); }

int remote_warnings(const test::WarningLog& log) {
    int count = 0;
    for (const auto& warning : log.seen) count += warning.kind == WarningKind::remote_cache_failed;
    return count;
}

std::string all_warnings(const test::WarningLog& log) {
    std::string text;
    for (const auto& warning : log.seen) text += warning.message + "\n";
    return text;
}

Program small_program() {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "bounded.cu";
    return Program(R"(extern "C" __global__ void bounded(int* x) { *x += 7; })", SourceType::cxx,
                   options);
}

// get() is a miss within the bound, warned about; then a compile through the cache succeeds.
void expect_bounded_miss(RemoteProgramCache& cache, test::WarningLog& warnings,
                         const char* expected_cause) {
    const Clock::time_point start = Clock::now();
    EXPECT_FALSE(cache.get(key_of(1)));
    const auto took = Clock::now() - start;
    EXPECT_LT(took, slack_bound) << "took "
                                 << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                                 << " ms";
    EXPECT_EQ(cache.stats().hits, 0u);
    EXPECT_EQ(cache.stats().misses, 1u);
    ASSERT_GE(remote_warnings(warnings), 1);
    EXPECT_NE(all_warnings(warnings).find(expected_cause), std::string::npos) << all_warnings(warnings);

    // A fresh cache (no back-off yet) in a compile: the compile goes on and succeeds.
    RemoteProgramCache fresh(cache.options());
    Program program = small_program();
    ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &fresh});
    EXPECT_GT(code.size(), 0u);
    EXPECT_EQ(fresh.stats().hits, 0u);
    EXPECT_GE(fresh.stats().misses, 1u);
}

TEST(RemoteCacheBounds, AReplyTrickledAByteAtATimeIsBoundedAsAWhole) {
    // The `$100000` bulk reply, one byte every 50 ms: hours, if only each read were bounded.
    FakeRedisServer server({Behaviour::trickle, "$100000\r\n" + std::string(100000, 'x') + "\r\n", 50ms});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    expect_bounded_miss(cache, warnings, "timeout");
    EXPECT_EQ(cache.counters().command_failures, 1u);
}

TEST(RemoteCacheBounds, AServerThatAcceptsAndNeverAnswers) {
    FakeRedisServer server({Behaviour::stall});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    expect_bounded_miss(cache, warnings, "timeout");
    // Backing off now: the next calls do not wait at all.
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(cache.get(key_of(i)));
    EXPECT_LT(Clock::now() - start, bound);
    EXPECT_EQ(cache.counters().skipped, 5u);
}

TEST(RemoteCacheBounds, AConnectionResetInTheMiddleOfAReply) {
    FakeRedisServer server({Behaviour::reset, "$1000\r\n" + std::string(1000, 'x') + "\r\n", 20ms});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    expect_bounded_miss(cache, warnings, "closed the connection");
}

TEST(RemoteCacheBounds, RepliesThatAreNotRedisProtocol) {
    FakeRedisServer server({Behaviour::junk, "HTTP/1.1 400 Bad Request\r\n\r\n"});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    expect_bounded_miss(cache, warnings, "protocol");
}

// A value announced at 100 MB (over max_entry_bytes) is refused from its header: the bytes read
// stay far below the announced size, and the server's filler is never buffered.
TEST(RemoteCacheBounds, AHugeAnnouncedValueIsRefusedBeforeItIsRead) {
    FakeRedisServer server({Behaviour::endless, "$100000000\r\n"});
    test::WarningLog warnings;
    RemoteProgramCache cache(
        RemoteCacheOptions::from_url(server.url(bounds + "&max_entry_bytes=1048576")));
    expect_bounded_miss(cache, warnings, "100000000");
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    EXPECT_LT(cache.counters().bytes_received, 256u << 10) << "read far below the 100 MB announced";
    EXPECT_LT(server.bytes_sent(), 16u << 20) << "the client closed the connection at once";
}

// A reply that never ends without announcing its length is read no further than its first line
// may go (a status line of endless bytes), or than max_entry_bytes (an endless array of small
// strings), not for the whole bound.
TEST(RemoteCacheBounds, AnEndlessReplyIsCut) {
    {
        FakeRedisServer server({Behaviour::endless, "+"});
        test::WarningLog warnings;
        RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
        expect_bounded_miss(cache, warnings, "first line");
        EXPECT_LT(cache.counters().bytes_received, 256u << 10);
    }
    // 20,000 elements of 9 bytes could fit in 8 KiB + 64 KiB of framing, but they come on and on.
    std::string elements = "*20000\r\n";
    for (int i = 0; i < 20000; ++i) elements += "$1\r\nx\r\n";
    FakeRedisServer server({Behaviour::junk, elements});
    test::WarningLog warnings;
    RemoteProgramCache cache(
        RemoteCacheOptions::from_url(server.url(bounds + "&max_entry_bytes=8192")));
    expect_bounded_miss(cache, warnings, "max_entry_bytes");
    EXPECT_LT(cache.counters().bytes_received, 128u << 10);
}

// Peak resident memory of this process so far, in MiB.
long peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

std::string repeated(std::string_view text, std::size_t times) {
    std::string bytes;
    bytes.reserve(text.size() * times);
    for (std::size_t i = 0; i < times; ++i) bytes += text;
    return bytes;
}

// An array of more elements than max_entry_bytes (64 MiB, the default) can hold in memory, at the
// top or nested, followed by 4-byte integers without end: hiredis makes an object of some 64 bytes
// of each, so 64 MiB of them on the wire once took a gigabyte and seconds. Each is refused as soon
// as what it costs passes the bound (the array's count, which cannot fit, before any element).
TEST(RemoteCacheBounds, AnArrayOfManySmallElementsCostsNoMoreThanTheBound) {
    for (const std::string reply : {"*1\r\n*2000000000\r\n", "*20000000\r\n"}) {
        SCOPED_TRACE(reply);
        FakeRedisServer server({Behaviour::endless, reply, 50ms, 0, repeated(":1\r\n", 16384)});
        test::WarningLog warnings;
        RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
        const long peak_before = peak_rss_mib();
        const Clock::time_point start = Clock::now();
        EXPECT_FALSE(cache.get(key_of(1)));
        EXPECT_LT(Clock::now() - start, slack_bound);
        EXPECT_LT(peak_rss_mib() - peak_before, 256) << "MiB more at the peak";
        EXPECT_LT(cache.counters().bytes_received, 256u << 10);
        EXPECT_EQ(cache.stats().misses, 1u);
        EXPECT_NE(all_warnings(warnings).find("elements"), std::string::npos) << all_warnings(warnings);
    }
    // An array announcing more than hiredis takes at all is not Redis's protocol.
    FakeRedisServer server({Behaviour::endless, "*4294967295\r\n"});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    expect_bounded_miss(cache, warnings, "out of range");
    EXPECT_LT(cache.counters().bytes_received, 256u << 10);
}

// A reply refused for what it costs is a failure like a dead server's: the cache backs off, so a
// compile that looks up many keys (headers, then code, then the compile lock) asks the server
// once, not at each lookup.
TEST(RemoteCacheBounds, ARefusedReplyStartsTheBackOff) {
    FakeRedisServer server({Behaviour::endless, "*1\r\n*2000000000\r\n", 50ms, 0,
                            repeated(":1\r\n", 16384)});
    test::WarningLog warnings;
    RemoteProgramCache cache(
        RemoteCacheOptions::from_url(server.url(bounds + "&max_entry_bytes=1048576")));
    EXPECT_FALSE(cache.get(key_of(1)));
    EXPECT_FALSE(cache.get(key_of(2)));
    EXPECT_EQ(cache.counters().skipped, 1u);
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(remote_warnings(warnings), 1) << all_warnings(warnings);

    RemoteProgramCache fresh(cache.options());
    Program program = small_program();
    EXPECT_GT(compile_cached(program, CodeType::cubin, {}, {.cache = &fresh}).size(), 0u);
    EXPECT_EQ(server.connections(), 2u) << "one exchange for the whole compile";
    EXPECT_GE(fresh.counters().skipped, 1u);
}

// Resolving a host name counts in the connect bound: a resolver that does not answer costs one
// connect timeout (then the back-off), not the resolver's own timeouts.
TEST(RemoteCacheBounds, AResolverThatDoesNotAnswerIsBounded) {
    const StalledResolver stalled;
    stalled_lookups = 0;
    test::WarningLog warnings;
    RemoteProgramCache cache(
        RemoteCacheOptions::from_url("redis://" + std::string(stalled_name) + ":6379/0?" + bounds));
    const Clock::time_point start = Clock::now();
    EXPECT_FALSE(cache.get(key_of(1)));
    EXPECT_LT(Clock::now() - start, slack_bound);
    EXPECT_EQ(stalled_lookups, 1);
    EXPECT_EQ(cache.counters().connection_failures, 1u);
    EXPECT_NE(all_warnings(warnings).find("cannot resolve '" + std::string(stalled_name) +
                                          "': no answer within the connect timeout"),
              std::string::npos)
        << all_warnings(warnings);
}

// A name the resolver answers is looked up the same way and works.
TEST(RemoteCacheBounds, AHostNameIsResolved) {
    CUDACORE_REQUIRE_REDIS();
    test::RedisServer server;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(
        "redis://localhost:" + std::to_string(server.port()) + "/0?" + bounds));
    cache.put(key_of(3), ObjectCode::from_cubin(std::string(1000, 'c'), "c"));
    EXPECT_TRUE(cache.get(key_of(3)));
}

// A put into a server that trickles its answer is bounded too, and fails as a store.
TEST(RemoteCacheBounds, APutIsBoundedAsAWhole) {
    FakeRedisServer server({Behaviour::trickle, "+OK\r\n", 400ms});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(server.url(bounds)));
    const Clock::time_point start = Clock::now();
    EXPECT_THROW(cache.put(key_of(1), ObjectCode::from_cubin(std::string(1000, 'c'), "c")),
                 CacheError);
    EXPECT_LT(Clock::now() - start, slack_bound);
    EXPECT_EQ(cache.stats().failed_stores, 1u);
}

// A TLS server whose handshake arrives a byte at a time (a trickling path in front of a real
// TLS redis-server): the handshake counts in the connect bound.
TEST(RemoteCacheBounds, ASlowTlsHandshakeIsBounded) {
    CUDACORE_REQUIRE_REDIS();
    test::TempDir dir;
    if (const std::string why = test::make_tls_files(dir.path()); !why.empty()) GTEST_SKIP() << why;
    test::RedisServer real("", test::RedisServer::Tls::in(dir.path()));
    FakeRedisServer path({Behaviour::proxy, "", 20ms, real.port()});
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(
        path.url(bounds + "&tls_ca=" + (dir.path() / "ca.crt").string(), true)));
    expect_bounded_miss(cache, warnings, "TLS");

    // The same path with a fast link works: the bound is not a failure in itself.
    FakeRedisServer fast({Behaviour::proxy, "", 0ms, real.port()});
    RemoteProgramCache working(RemoteCacheOptions::from_url(
        fast.url("tls_ca=" + (dir.path() / "ca.crt").string(), true)));
    working.put(key_of(2), ObjectCode::from_cubin(std::string(1000, 'c'), "c"));
    EXPECT_TRUE(working.get(key_of(2)));
}

}  // namespace
