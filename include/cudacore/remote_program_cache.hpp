/// @file
/// RemoteProgramCache: a ProgramCache on a Redis server, shared by every process and machine that
/// points at it, so a fleet compiles each program once.
///
/// Values. Each entry is stored exactly as DiskProgramCache stores a file: a header (magic, the
/// full key) followed by the serialized ObjectCode with its XXH3 checksum and format version.
/// get() checks all of it against the key asked for; a value that fails (truncated, damaged, of a
/// newer format, stored under the wrong key, larger than max_entry_bytes) is counted in
/// CacheStats::corrupt_entries, is a miss and is never returned. It is left on the server: the
/// next put of that key (compile_cached's, after its compile) replaces it.
///
/// Keys. `<key_prefix>:v<format>:<key hex>`, where format is ObjectCode's serialization format
/// version: clients of another format never read each other's values, and clear() removes the
/// prefix's entries of every format.
///
/// Failure is never fatal. A server that is down, unreachable, slow (past the timeouts), refusing
/// the credentials or out of memory makes get() a miss (it never throws) and put() a failed store
/// (counted in CacheStats::failed_stores; see put() for when it throws). After a connection-level
/// failure (connect, authentication, I/O, timeout) the cache backs off: for `retry_after` (doubled
/// after each failed retry, up to `max_retry_after`) gets are misses and puts are skipped without
/// touching the network, so a dead server does not cost a timeout per call; then one thread tries
/// again while the others keep skipping. Each failure is reported through the warning handler
/// (WarningKind::remote_cache_failed) once per cause, and again only after the server has worked
/// in between. A peer that resets the connection while a command is written never raises SIGPIPE
/// in the process: it is held back on the writing thread for the write and discarded.
///
/// TLS. Debian 12's hiredis (0.14) has no TLS support, so `rediss://` URLs are refused with
/// InvalidArgumentError saying so; reach a TLS-only server through a local TLS tunnel (stunnel,
/// spiped) on loopback.
///
/// Thread-safe: connections are kept in a small pool (one per concurrent caller, up to
/// `max_idle_connections` kept open between calls). A fork()ed child may go on using the object:
/// it drops its copies of the parent's pooled connections and opens its own. Security: cached code runs on your GPUs, so
/// the server must be trusted and writable only by you (an ACL user of its own); the checks
/// above catch damage, not a malicious writer.
#pragma once

#include "cudacore/program_cache.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cudacore {

/// Where and how a RemoteProgramCache reaches its server.
struct RemoteCacheOptions {
    std::string host = "127.0.0.1";  ///< a name, an IPv4 or an IPv6 address
    int port = 6379;                 ///< TCP port, 1..65535
    int database = 0;       ///< SELECTed after connecting when not 0
    std::string user;       ///< ACL user (Redis 6+); empty: AUTH with the password alone
    std::string password;   ///< empty: no AUTH
    /// Bound on establishing a connection (TCP connect; then each reply of AUTH and SELECT is
    /// bounded by operation_timeout).
    std::chrono::milliseconds connect_timeout{250};
    /// Bound on each socket read or write of a command (a value of many MiB takes several).
    std::chrono::milliseconds operation_timeout{1000};
    /// How long the cache stops using the server after a connection-level failure; doubled after
    /// each failed retry up to max_retry_after, reset by a success.
    std::chrono::milliseconds retry_after{1000};
    std::chrono::milliseconds max_retry_after{30000};  ///< the longest back-off
    /// Namespace of the keys (`<key_prefix>:v<format>:<key hex>`); must not contain '*', '?',
    /// '[' or spaces (clear() matches it).
    std::string key_prefix = "cudacore";
    /// Expiry of stored entries (Redis EX); 0: none (the server's eviction policy bounds them).
    std::chrono::seconds expiry{0};
    /// Largest value stored or accepted (encoded entry bytes); larger puts are skipped, larger
    /// values read are corrupt. Redis's own limit (proto-max-bulk-len) is 512 MiB by default.
    std::uint64_t max_entry_bytes = std::uint64_t{64} << 20;
    /// Connections kept open between calls (more are opened while more threads call at once).
    unsigned max_idle_connections = 8;

    /// Parses `redis://[user[:password]\@]host[:port][/db][?option=value&...]`: user and
    /// password percent-decoded, an IPv6 host in brackets, port 6379 and database 0 by default.
    /// Options: connect_timeout_ms, timeout_ms (operation_timeout), retry_ms (retry_after),
    /// max_retry_ms, expiry_s, prefix, max_entry_bytes. Throws InvalidArgumentError naming the URL
    /// (its password replaced by "***") and what is wrong: not a URL, another scheme (`rediss://`
    /// is refused: this build's hiredis has no TLS), no host, a bad port, database or number, an
    /// unknown option, a fragment.
    static RemoteCacheOptions from_url(std::string_view url);
    /// from_url($CUDACORE_REMOTE_CACHE), or nullopt when it is unset or empty. Throws what
    /// from_url throws.
    static std::optional<RemoteCacheOptions> from_environment();
    /// The server as a URL without the password (for messages): redis://user\@host:port/db.
    std::string display_url() const;
};

/// Counters of a RemoteProgramCache beyond CacheStats.
struct RemoteCacheCounters {
    std::uint64_t connections_opened = 0;   ///< connections made (pooled between calls)
    std::uint64_t connection_failures = 0;  ///< connects, AUTH or SELECT that failed
    std::uint64_t command_failures = 0;     ///< commands lost to I/O errors or timeouts
    std::uint64_t server_errors = 0;        ///< error replies (OOM under maxmemory, ACL denials)
    std::uint64_t skipped = 0;              ///< gets and puts not tried while backing off
    std::uint64_t oversized = 0;            ///< puts over max_entry_bytes, not sent
};

/// A program cache on a Redis server (format, failures and threads: this file's description).
class RemoteProgramCache final : public ProgramCache {
public:
    /// Connects lazily: constructing never touches the network and never fails for the server's
    /// state. Throws InvalidArgumentError for options that cannot work (no host, a port outside
    /// 1..65535, a negative database, a key prefix with a pattern character, zero timeouts).
    explicit RemoteProgramCache(RemoteCacheOptions options);
    ~RemoteProgramCache() override;
    RemoteProgramCache(const RemoteProgramCache&) = delete;
    RemoteProgramCache& operator=(const RemoteProgramCache&) = delete;

    /// The entry stored under `key`, checked; nullopt on a miss, a bad value (counted corrupt), a
    /// failure or while backing off. Never throws CacheError.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key` (SET, with EX when options.expiry is set). A failed store is
    /// counted in stats().failed_stores. As DiskProgramCache::put does, throws CacheError naming
    /// the server, the key and the cause when the store was tried and failed, so compile_cached
    /// hands it to its on_cache_error; while the cache backs off the put is skipped without
    /// throwing (counted as a failed store and in counters().skipped). An entry over
    /// max_entry_bytes is not stored and not a failure (counters().oversized).
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// This object's counters. entries and bytes are 0: counting them means scanning the server
    /// (server_entries()).
    CacheStats stats() const override;
    /// Removes every entry under the key prefix (all format versions), by SCAN and UNLINK; other
    /// keys on the server are left alone. Throws CacheError when the server cannot be used.
    void clear() override;
    /// How many entries under the key prefix the server holds (all format versions), by SCAN (a
    /// maintenance call: its cost grows with the database). Throws CacheError when the server
    /// cannot be used.
    std::uint64_t server_entries();

    /// This object's connection and failure counters (thread-safe, never throws).
    RemoteCacheCounters counters() const;
    /// The options it was made with.
    const RemoteCacheOptions& options() const noexcept;
    /// The Redis key of `key`'s entry.
    std::string redis_key(const CacheKey& key) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudacore
