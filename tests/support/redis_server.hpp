// A real redis-server for the remote cache's tests and benchmarks: started on a free loopback
// port with a configuration and working folder of its own in a temporary directory, stopped by
// the destructor (and killed with this process: it gets SIGKILL when the thread that started it
// ends).
#pragma once

#include <filesystem>
#include <string>
#include <sys/types.h>

// In a GoogleTest test: skips it, printing the reason, when no redis-server can be started.
#define CUDACORE_REQUIRE_REDIS()                                                                    \
    do {                                                                                           \
        if (const std::string reason_ = ::cudacore::test::RedisServer::unavailable_reason();       \
            !reason_.empty())                                                                      \
            GTEST_SKIP() << reason_;                                                               \
    } while (0)

namespace cudacore::test {

// Makes the TLS files of a test server and its clients in `dir` with the openssl command: a CA
// (ca.crt, ca.key), a second CA that signs nothing the server shows (other_ca.crt), a certificate
// for 127.0.0.1 signed by the first CA (server.crt, server.key), and a client certificate signed
// by it too (client.crt, client.key). Returns "" when made, else why not (no openssl command, or
// its exit status and output).
std::string make_tls_files(const std::filesystem::path& dir);

class RedisServer {
public:
    // Why the tests cannot start one ("" when they can): redis-server is not installed.
    static std::string unavailable_reason();

    // A server that speaks only TLS on its port: its certificate and key, the CA file it checks
    // client certificates with, and whether it requires one (tls-auth-clients).
    struct Tls {
        std::filesystem::path certificate, key, ca;
        bool require_client_certificate = false;

        // The server's files among those make_tls_files made in `dir`.
        static Tls in(const std::filesystem::path& dir, bool require_client_certificate = false) {
            return {dir / "server.crt", dir / "server.key", dir / "ca.crt", require_client_certificate};
        }
    };

    // Starts a server with `extra_config` appended to its configuration (ACL users, maxmemory),
    // plain or TLS only. Throws std::runtime_error with the server's log when it does not come up.
    explicit RedisServer(std::string extra_config = "");
    RedisServer(std::string extra_config, Tls tls);
    ~RedisServer();
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;

    int port() const { return port_; }
    // redis://[credentials@]127.0.0.1:port/0 (rediss:// for a TLS server), with `query`
    // appended after '?' when not empty.
    std::string url(const std::string& credentials = "", const std::string& query = "") const;
    bool running() const { return pid_ > 0; }

    // Ends the server at once (SIGKILL), as a crash would; it loses its data (no persistence).
    void kill();
    // Stops it (SIGTERM), waiting for it to exit.
    void stop();
    // Starts it again on the same port with the same configuration (empty).
    void start();

private:
    void start_in_new_directory();
    void launch();

    std::filesystem::path directory_;
    std::string config_;
    std::string tls_config_;  // empty: plain TCP
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace cudacore::test
