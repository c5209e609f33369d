// RemoteProgramCache over TLS (rediss://) against a real redis-server that speaks only TLS, with
// certificates the test makes with the openssl command: a server certified by the test's CA is
// used (a compile stored by one cache is a hit for another); a CA that did not sign it, or a
// server that wants a client certificate the client lacks, is a connection failure that is
// warned about once and never fails a compile; a plain server is not taken for a TLS one.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include <chrono>
#include <string>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;
using test::RedisServer;
namespace fs = std::filesystem;

// Certificates made once per test: two CAs (the second signs nothing the server shows), a server
// certificate for 127.0.0.1 signed by the first, and a client certificate signed by it too.
class Certificates {
public:
    Certificates() : problem_(test::make_tls_files(dir_.path())) {}
    // Why the test cannot run ("" when it can): no openssl command, or it failed.
    const std::string& unavailable() const { return problem_; }
    fs::path operator/(const std::string& name) const { return dir_.path() / name; }
    RedisServer::Tls server(bool require_client_certificate = false) const {
        return RedisServer::Tls::in(dir_.path(), require_client_certificate);
    }

private:
    test::TempDir dir_;
    std::string problem_;
};

#define REQUIRE_CERTIFICATES(certificates)                              \
    do {                                                                \
        if (const std::string why_ = (certificates).unavailable(); !why_.empty()) \
            GTEST_SKIP() << why_;                                        \
    } while (0)

const char* const kernel = "extern \"C\" __global__ void tls_kernel(int* x) { *x = 42; }";

Program tls_program() {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "tls_kernel.cu";
    return Program(kernel, SourceType::cxx, options);
}

int remote_warnings(const test::WarningLog& log) {
    int count = 0;
    for (const auto& warning : log.seen) count += warning.kind == WarningKind::remote_cache_failed;
    return count;
}

TEST(RemoteCacheTls, AServerCertifiedByTheCaIsUsedAcrossCaches) {
    CUDACORE_REQUIRE_REDIS();
    Certificates certificates;
    REQUIRE_CERTIFICATES(certificates);
    RedisServer server("", certificates.server());
    const std::string url = server.url("", "tls_ca=" + (certificates / "ca.crt").string());
    ASSERT_EQ(url.rfind("rediss://", 0), 0u) << url;

    test::WarningLog warnings;
    Program program = tls_program();
    RemoteProgramCache writer(RemoteCacheOptions::from_url(url));
    const ObjectCode compiled = compile_cached(program, CodeType::cubin, {}, {.cache = &writer});
    EXPECT_EQ(writer.counters().connection_failures, 0u);
    EXPECT_EQ(writer.stats().insertions, 1u);  // the code, under its first key

    RemoteProgramCache reader(RemoteCacheOptions::from_url(url));  // a connection of its own
    const std::optional<ObjectCode> hit = find_cached(program, CodeType::cubin, {}, {.cache = &reader});
    ASSERT_TRUE(hit) << "the code stored over TLS is not found over TLS";
    const ObjectCode again = compile_cached(program, CodeType::cubin, {}, {.cache = &reader});
    EXPECT_EQ(again.code(), compiled.code());
    EXPECT_EQ(reader.stats().insertions, 0u) << "a hit must not compile and store again";
    EXPECT_EQ(remote_warnings(warnings), 0);
    EXPECT_EQ(reader.options().display_url().rfind("rediss://", 0), 0u);
}

TEST(RemoteCacheTls, ACaThatDidNotSignTheServerIsRefusedAndTheCompileGoesOn) {
    CUDACORE_REQUIRE_REDIS();
    Certificates certificates;
    REQUIRE_CERTIFICATES(certificates);
    RedisServer server("", certificates.server());
    test::WarningLog warnings;
    RemoteProgramCache cache(RemoteCacheOptions::from_url(
        server.url("", "tls_ca=" + (certificates / "other_ca.crt").string() + "&retry_ms=60000")));
    Program program = tls_program();
    const ObjectCode code = compile_cached(program, CodeType::cubin, {}, {.cache = &cache});
    EXPECT_FALSE(code.code().empty()) << "the compile must return its code";
    EXPECT_GE(cache.counters().connection_failures, 1u);
    EXPECT_EQ(cache.stats().insertions, 0u);
    ASSERT_EQ(remote_warnings(warnings), 1) << "one warning for the cause";
    const std::string message = warnings.seen.back().message;
    EXPECT_NE(message.find("not trusted"), std::string::npos) << message;
    EXPECT_NE(message.find("rediss://127.0.0.1"), std::string::npos) << message;
}

TEST(RemoteCacheTls, AServerThatWantsAClientCertificateGetsOneOrRefuses) {
    CUDACORE_REQUIRE_REDIS();
    Certificates certificates;
    REQUIRE_CERTIFICATES(certificates);
    RedisServer server("", certificates.server(/*require_client_certificate=*/true));
    const std::string ca = "tls_ca=" + (certificates / "ca.crt").string();
    {
        test::WarningLog warnings;
        RemoteProgramCache without(RemoteCacheOptions::from_url(server.url("", ca + "&retry_ms=60000")));
        EXPECT_THROW(without.put(CacheKey::of_bytes("tls key"), ObjectCode::from_ptx(".version 8.0", "p")),
                     CacheError);  // tried, refused
        EXPECT_FALSE(without.get(CacheKey::of_bytes("tls key")));
        // With TLS 1.3 the handshake ends before the server checks the client: its refusal is
        // an alert read by the first command.
        const RemoteCacheCounters counters = without.counters();
        EXPECT_GE(counters.connection_failures + counters.command_failures, 1u);
        ASSERT_EQ(remote_warnings(warnings), 1);
        EXPECT_NE(warnings.seen.back().message.find("certificate"), std::string::npos)
            << warnings.seen.back().message;
    }
    RemoteProgramCache with(RemoteCacheOptions::from_url(
        server.url("", ca + "&tls_cert=" + (certificates / "client.crt").string() +
                           "&tls_key=" + (certificates / "client.key").string())));
    with.put(CacheKey::of_bytes("tls key"), ObjectCode::from_ptx(".version 8.0", "p"));
    const std::optional<ObjectCode> back = with.get(CacheKey::of_bytes("tls key"));
    ASSERT_TRUE(back) << "the client certificate was not accepted";
    EXPECT_EQ(back->code(), ".version 8.0");
    EXPECT_EQ(with.counters().connection_failures, 0u);
}

TEST(RemoteCacheTls, APlainServerIsNotTakenForATlsOneNorTheOtherWayRound) {
    CUDACORE_REQUIRE_REDIS();
    Certificates certificates;
    REQUIRE_CERTIFICATES(certificates);
    RedisServer plain;
    RedisServer tls("", certificates.server());
    const std::string plain_as_tls = "rediss://127.0.0.1:" + std::to_string(plain.port()) +
                                     "/0?connect_timeout_ms=2000&retry_ms=60000&tls_ca=" +
                                     (certificates / "ca.crt").string();
    const std::string tls_as_plain =
        "redis://127.0.0.1:" + std::to_string(tls.port()) + "/0?timeout_ms=500&retry_ms=60000";
    for (const std::string& url : {plain_as_tls, tls_as_plain}) {
        SCOPED_TRACE(url);
        test::WarningLog warnings;
        RemoteProgramCache cache(RemoteCacheOptions::from_url(url));
        const auto start = std::chrono::steady_clock::now();
        EXPECT_FALSE(cache.get(CacheKey::of_bytes("any")));
        EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "bounded by the timeouts";
        EXPECT_EQ(cache.stats().hits, 0u);
        EXPECT_EQ(remote_warnings(warnings), 1);
    }
}

TEST(RemoteCacheTls, UrlsAndOptions) {
    auto options = RemoteCacheOptions::from_url(
        "rediss://h:6380/2?tls_ca=%2Ftmp%2Fca%20file.pem&tls_cert=/c.pem&tls_key=/k.pem");
    EXPECT_TRUE(options.tls);
    EXPECT_EQ(options.tls_ca_file, "/tmp/ca file.pem");
    EXPECT_EQ(options.tls_cert_file, "/c.pem");
    EXPECT_EQ(options.tls_key_file, "/k.pem");
    EXPECT_EQ(options.display_url(), "rediss://h:6380/2");
    EXPECT_FALSE(RemoteCacheOptions::from_url("redis://h").tls);
    test::expect_invalid([] { RemoteCacheOptions::from_url("redis://h?tls_ca=/ca.pem"); },
                         {"tls_ca", "needs rediss://"});
    test::expect_invalid([] { RemoteCacheOptions::from_url("rediss://h?tls_cert="); },
                         {"tls_cert", "needs a file"});
    RemoteCacheOptions bad;
    bad.tls_ca_file = "/ca.pem";
    EXPECT_THROW(RemoteProgramCache{bad}, InvalidArgumentError);  // TLS files without TLS
    bad = {};
    bad.tls = true;
    bad.tls_key_file = "/k.pem";
    EXPECT_THROW(RemoteProgramCache{bad}, InvalidArgumentError);  // a key without its certificate
}

}  // namespace
