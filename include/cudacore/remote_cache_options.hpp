/// @file
/// RemoteCacheOptions and RemoteCacheCounters: where and how a RemoteProgramCache reaches its
/// server, and what it counts.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudacore {

/// Where and how a RemoteProgramCache reaches its server.
struct RemoteCacheOptions {
    std::string host = "127.0.0.1";  ///< a name, an IPv4 or an IPv6 address
    int port = 6379;                 ///< TCP port, 1..65535
    int database = 0;       ///< SELECTed after connecting when not 0
    std::string user{};     ///< ACL user (Redis 6+); empty: AUTH with the password alone
    std::string password{}; ///< empty: no AUTH
    bool tls = false;  ///< TLS (`rediss://`): encrypt and verify the server
    std::string tls_ca_file{};  ///< PEM CAs the server's certificate chains to; empty: the system's
    std::string tls_cert_file{};  ///< PEM client certificate (chain); empty: none
    std::string tls_key_file{};  ///< PEM key of tls_cert_file; empty: in tls_cert_file
    /// Bound on a connection's making: TCP connect, TLS handshake, AUTH and SELECT.
    std::chrono::milliseconds connect_timeout{250};
    /// Bound on each command, its whole reply included.
    std::chrono::milliseconds operation_timeout{1000};
    /// How long the cache stops using the server after a failure; doubled per failed retry.
    std::chrono::milliseconds retry_after{1000};
    std::chrono::milliseconds max_retry_after{30000};  ///< the longest back-off
    /// Namespace of the keys; no '*', '?', '[' or spaces.
    std::string key_prefix = "cudacore";
    /// Expiry of stored entries (Redis EX); 0: none.
    std::chrono::seconds expiry{0};
    /// Largest value stored or accepted; no reply is read past it (docs/design/remote-cache.md).
    std::uint64_t max_entry_bytes = std::uint64_t{64} << 20;
    /// A file holding the secret that authenticates entries (16+ bytes, mode 0600).
    std::string secret_file{};
    /// The name of an environment variable holding the secret (as secret_file; not both).
    std::string secret_env{};
    /// Connections kept open between calls.
    unsigned max_idle_connections = 8;
    /// Expiry of the compile lock held while compiling a missing key; 0: no lock.
    std::chrono::milliseconds lock_expiry{20000};
    /// The longest a process waits for another's compile of the same key (> lock_expiry).
    std::chrono::milliseconds lock_wait{30000};

    /// Parses `redis[s]://[user[:password]\@]host[:port][/db][?option=value&...]` (options as
    /// docs/caching.md lists them). InvalidArgumentError naming the URL (password hidden).
    static RemoteCacheOptions from_url(std::string_view url);
    /// from_url($CUDACORE_REMOTE_CACHE), or nullopt when it is unset or empty.
    static std::optional<RemoteCacheOptions> from_environment();
    /// The server as a URL without the password: redis://user\@host:port/db.
    std::string display_url() const;
    /// The secret secret_file or secret_env names (""). InvalidArgumentError.
    std::string read_secret() const;
};

/// Counters of a RemoteProgramCache beyond CacheStats.
struct RemoteCacheCounters {
    std::uint64_t connections_opened = 0;   ///< connections made (pooled between calls)
    std::uint64_t connection_failures = 0;  ///< connects, AUTH or SELECT that failed
    std::uint64_t command_failures = 0;     ///< commands lost to I/O errors or timeouts
    std::uint64_t server_errors = 0;        ///< error replies (OOM under maxmemory, ACL denials)
    std::uint64_t skipped = 0;              ///< gets and puts not tried while backing off
    std::uint64_t oversized = 0;            ///< puts over max_entry_bytes, not sent
    std::uint64_t locks_acquired = 0;      ///< compile locks taken (compiled for the fleet)
    std::uint64_t lock_waits = 0;          ///< misses that waited for another process's compile
    std::uint64_t lock_wait_hits = 0;      ///< waits that ended with the entry another stored
    std::uint64_t lock_wait_timeouts = 0;  ///< waits that passed lock_wait: compiled here too
    std::uint64_t locks_lost = 0;          ///< locks found expired at release
    std::uint64_t lock_wait_ns = 0;  ///< time spent waiting for other processes' compiles
    std::uint64_t bytes_received = 0;  ///< bytes read from the server (every reply)
};

}  // namespace cudacore
