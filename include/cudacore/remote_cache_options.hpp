/// @file
/// RemoteCacheOptions and RemoteCacheCounters: where and how a RemoteProgramCache
/// (remote_program_cache.hpp, which includes this header) reaches its server, and what it counts.
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
    /// TLS (`rediss://`): encrypt the connection and verify the server (see
    /// remote_program_cache.hpp).
    bool tls = false;
    /// PEM file of the CAs the server's certificate must chain to; empty: the system's CAs.
    std::string tls_ca_file{};
    /// PEM client certificate (chain) sent to servers that ask for one; empty: none.
    std::string tls_cert_file{};
    /// PEM private key of tls_cert_file; empty: the key is in tls_cert_file.
    std::string tls_key_file{};
    /// Bound on establishing a connection as a whole: TCP connect, TLS handshake, AUTH and SELECT.
    std::chrono::milliseconds connect_timeout{250};
    /// Bound on each command as a whole: sending it and reading its whole reply (raise it for
    /// values of many MiB over a slow link: the whole value must arrive within it).
    std::chrono::milliseconds operation_timeout{1000};
    /// How long the cache stops using the server after a connection-level failure; doubled after
    /// each failed retry up to max_retry_after, reset by a success.
    std::chrono::milliseconds retry_after{1000};
    std::chrono::milliseconds max_retry_after{30000};  ///< the longest back-off
    /// Namespace of the keys (`PREFIX:vFORMAT.ENTRY_FORMAT:KEY_HEX`); must not contain '*', '?',
    /// '[' or spaces (clear() matches it).
    std::string key_prefix = "cudacore";
    /// Expiry of stored entries (Redis EX); 0: none (the server's eviction policy bounds them).
    std::chrono::seconds expiry{0};
    /// Largest value stored or accepted (encoded entry bytes); larger puts are skipped, larger
    /// values are corrupt, refused from the length their reply announces (never read), and no
    /// reply is read past it (and 64 KiB), nor parsed into objects that take more memory than
    /// that (a refused reply is a failure: the cache backs off). Redis's own limit
    /// (proto-max-bulk-len) is 512 MiB.
    std::uint64_t max_entry_bytes = std::uint64_t{64} << 20;
    /// A file holding the secret that authenticates entries (HMAC-SHA-256; at least 16 bytes, a
    /// regular file of at most 4096, mode 0600), read once when the cache is made. Empty: none,
    /// unless secret_env names one.
    std::string secret_file{};
    /// The name of an environment variable holding the secret (as secret_file; not both).
    std::string secret_env{};
    /// Connections kept open between calls (more are opened while more threads call at once).
    unsigned max_idle_connections = 8;
    /// Expiry of the compile lock a process holds while it compiles a missing key (Redis PX):
    /// how long the others wait for an owner that died. 0: no lock, every process that misses
    /// compiles (and await_compile_turn() returns at once).
    std::chrono::milliseconds lock_expiry{20000};
    /// The longest a process waits for another one's compile of the same key before it compiles
    /// itself (longer than lock_expiry, so that an owner's death is survived by waiting).
    std::chrono::milliseconds lock_wait{30000};

    /// Parses `redis[s]://[user[:password]\@]host[:port][/db][?option=value&...]` (options:
    /// connect_timeout_ms, timeout_ms, retry_ms, max_retry_ms, expiry_s, prefix, max_entry_bytes,
    /// lock_ms, lock_wait_ms, secret_file, secret_env, tls_ca, tls_cert, tls_key); port 6379 and
    /// database 0 by default, `rediss://` sets tls. Throws
    /// InvalidArgumentError naming the URL (password hidden) and what is wrong.
    static RemoteCacheOptions from_url(std::string_view url);
    /// from_url($CUDACORE_REMOTE_CACHE), or nullopt when it is unset or empty. Throws what
    /// from_url throws.
    static std::optional<RemoteCacheOptions> from_environment();
    /// The server as a URL without the password (for messages): redis://user\@host:port/db
    /// (rediss:// with TLS).
    std::string display_url() const;
    /// The secret secret_file or secret_env names ("" when neither), read by the cache's rules.
    /// Throws InvalidArgumentError naming the file or variable and what is wrong. Thread-safe.
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
    /// Compile locks taken (this process compiled the key for the fleet).
    std::uint64_t locks_acquired = 0;
    std::uint64_t lock_waits = 0;          ///< misses that waited for another process's compile
    std::uint64_t lock_wait_hits = 0;      ///< waits that ended with the entry another stored
    std::uint64_t lock_wait_timeouts = 0;  ///< waits that passed lock_wait: compiled here too
    /// Locks found expired (or another process's) at release: the compile outlived lock_expiry.
    std::uint64_t locks_lost = 0;
    std::uint64_t lock_wait_ns = 0;  ///< time spent waiting for other processes' compiles
    std::uint64_t bytes_received = 0;  ///< bytes read from the server (every reply)
};

}  // namespace cudacore
