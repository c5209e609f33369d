/// @file
/// RemoteProgramCache: a ProgramCache on a Redis server, shared by every process and machine that
/// points at it, so a fleet compiles each program once.
///
/// Values. Each entry is the key and the serialized ObjectCode (with its own XXH3 checksum and
/// format version) sealed together (encode_entry): by SHA-256 without a secret, by HMAC-SHA-256
/// under the secret named by RemoteCacheOptions::secret_file or secret_env with one. get() checks
/// all of it against the key asked for; a value that fails (truncated, damaged, of a newer format,
/// sealed for another key, not authenticated by this cache's secret, or larger than
/// max_entry_bytes) is counted in CacheStats::corrupt_entries, is a miss, is reported through the
/// warning handler (WarningKind::remote_cache_failed, naming the Redis key and what failed) and is
/// never returned. It is left on the server: the next put of that key (compile_cached's, after its
/// compile) replaces it.
///
/// Trust. Without a secret the checks catch damage and mix-ups (a value copied under another key,
/// its key field rewritten or not), not a malicious writer: anyone who can write to the server can
/// compute a valid SHA-256 and make every client run code of their choice. With a secret, a writer
/// without it can delete entries or replace them with values that are refused (each a miss and a
/// warning, then a compile), and can copy an entry only under its own key; it cannot make a client
/// accept code it did not get from a holder of the secret. Anyone who can read the server (or the
/// network path without TLS) reads the code: the secret authenticates, it does not encrypt.
/// docs/caching.md states the model in full.
///
/// Keys. `<key_prefix>:v<format>.<entry format>:<key hex>`, where format is ObjectCode's
/// serialization format version and entry format that of the sealed value (2; cudacore stored
/// unsealed values under `v<format>:` before): clients of another format never read each other's
/// values, and clear() removes the prefix's entries of every format.
///
/// Failure is never fatal. A server that is down, unreachable, slow (past the timeouts), refusing
/// the credentials or out of memory makes get() a miss (it never throws) and put() a failed store
/// (counted in CacheStats::failed_stores; see put() for when it throws).
///
/// Bounds. Every wait is bounded as a whole, never per socket read: making a connection (TCP, the
/// TLS handshake, AUTH and SELECT) by connect_timeout, and each command (sending it and reading its
/// whole reply) by operation_timeout; a get() or put() returns within connect_timeout +
/// operation_timeout whatever the server or the path does (trickle its bytes, stall, reset), then
/// counts as a failure. A reply is read no further than its header when it announces a value over
/// max_entry_bytes (or more array elements than that could hold), its first line no further than
/// 64 KiB, and no reply past max_entry_bytes (and 64 KiB): a server cannot make a client buffer
/// more (counters().bytes_received counts what was read). Name resolution of a host
/// name is the system resolver's and bounded by its own timeouts (use an address to avoid it).
///
/// After a connection-level
/// failure (connect, authentication, I/O, timeout) the cache backs off: for `retry_after` (doubled
/// after each failed retry, up to `max_retry_after`) gets are misses and puts are skipped without
/// touching the network, so a dead server does not cost a timeout per call; then one thread tries
/// again while the others keep skipping. Each failure is reported through the warning handler
/// (WarningKind::remote_cache_failed) once per cause, and again only after the server has worked
/// in between. A peer that resets the connection while a command is written never raises SIGPIPE
/// in the process: it is held back on the writing thread for the write and discarded.
///
/// One compile per key across the fleet. When compile_cached() or get_or_compile() miss, they
/// call await_compile_turn(): the process that sets the key's lock (`SET <lock key> <token> NX
/// PX lock_expiry`, a random token of its own) compiles, stores and then releases the lock with
/// a compare-and-delete (a Lua script run by EVAL: the lock is deleted only while it still holds
/// this owner's token, so a lock that expired and was taken by another process is never
/// released by the first). The others poll for the entry with back-off (5 ms, doubled up to
/// 250 ms) and try the lock again at each poll: when the owner stores the entry they return it,
/// when the owner dies its lock expires after lock_expiry and one of them compiles. A waiter
/// never waits longer than lock_wait: then it compiles itself (counted in
/// RemoteCacheCounters::lock_wait_timeouts). A compile that runs longer than lock_expiry lets a
/// waiter compile the same key too (two compiles, never a wrong entry; counted in locks_lost).
/// A server that cannot be used while locking or waiting lets the caller compile at once; an ACL
/// user needs EVAL for the release (without it each lock is left to expire, warned once).
///
/// TLS. A `rediss://` server (RemoteCacheOptions::tls) is reached over TLS 1.2 or later through
/// OpenSSL (Debian 12's hiredis has no TLS of its own: hiredis formats the commands and parses the
/// replies, cudacore's own socket code and OpenSSL carry them, plain or not). The server's certificate must chain to tls_ca_file (or to the
/// system's CAs) and name the host of the URL (its DNS name, or its IP address); a client
/// certificate is sent where the server asks for one (`tls-auth-clients`). A server that fails
/// the check is a connection failure like any other (warned once, cause "TLS"; gets miss, the
/// compile goes on), never a connection without verification.
///
/// Thread-safe: connections are kept in a small pool (one per concurrent caller, up to
/// `max_idle_connections` kept open between calls). A fork()ed child may go on using the object:
/// it drops its copies of the parent's pooled connections and opens its own. Security: cached code
/// runs on your GPUs: without a secret the server must be writable only by those you trust as
/// much as your compiler (an ACL user of its own); with one, only holders of the secret are.
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
    /// TLS (`rediss://`): encrypt the connection and verify the server (this file's description).
    bool tls = false;
    /// PEM file of the CAs the server's certificate must chain to; empty: the system's CAs.
    std::string tls_ca_file;
    /// PEM client certificate (chain) sent to servers that ask for one; empty: none.
    std::string tls_cert_file;
    /// PEM private key of tls_cert_file; empty: the key is in tls_cert_file.
    std::string tls_key_file;
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
    /// reply is read past it (and 64 KiB). Redis's own limit (proto-max-bulk-len) is 512 MiB.
    std::uint64_t max_entry_bytes = std::uint64_t{64} << 20;
    /// A file holding the secret that authenticates entries (HMAC-SHA-256; its trailing white
    /// space ignored; at least 16 bytes, e.g. `openssl rand -hex 32 > file`, mode 0600). With a
    /// secret, entries are stored sealed by it and only entries it seals are accepted. Empty:
    /// none, unless secret_env names one. Read once, when the cache is made.
    std::string secret_file;
    /// The name of an environment variable holding the secret (as secret_file; not both).
    std::string secret_env;
    /// Connections kept open between calls (more are opened while more threads call at once).
    unsigned max_idle_connections = 8;
    /// Expiry of the compile lock a process holds while it compiles a missing key (Redis PX):
    /// how long the others wait for an owner that died. 0: no lock, every process that misses
    /// compiles (and await_compile_turn() returns at once).
    std::chrono::milliseconds lock_expiry{20000};
    /// The longest a process waits for another one's compile of the same key before it compiles
    /// itself (longer than lock_expiry, so that an owner's death is survived by waiting).
    std::chrono::milliseconds lock_wait{30000};

    /// Parses `redis[s]://[user[:password]\@]host[:port][/db][?option=value&...]`: user and
    /// password percent-decoded, an IPv6 host in brackets, port 6379 and database 0 by default;
    /// `rediss://` sets tls. Options: connect_timeout_ms, timeout_ms (operation_timeout), retry_ms
    /// (retry_after), max_retry_ms, expiry_s, prefix, max_entry_bytes, lock_ms (lock_expiry),
    /// lock_wait_ms (lock_wait), secret_file, secret_env, and with `rediss://` tls_ca, tls_cert,
    /// tls_key (file paths, percent-decoded). Throws InvalidArgumentError naming the URL (its password replaced by
    /// "***") and what is wrong: not a URL, another scheme, no host, a bad port, database or
    /// number, an unknown option, a TLS option without `rediss://`, a fragment.
    static RemoteCacheOptions from_url(std::string_view url);
    /// from_url($CUDACORE_REMOTE_CACHE), or nullopt when it is unset or empty. Throws what
    /// from_url throws.
    static std::optional<RemoteCacheOptions> from_environment();
    /// The server as a URL without the password (for messages): redis://user\@host:port/db
    /// (rediss:// with TLS).
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

/// A program cache on a Redis server (format, failures and threads: this file's description).
class RemoteProgramCache final : public ProgramCache {
public:
    /// Connects lazily: constructing never touches the network and never fails for the server's
    /// state. Reads the secret (secret_file or secret_env) once. Throws InvalidArgumentError for
    /// options that cannot work (no host, a port outside 1..65535, a negative database, a key
    /// prefix with a pattern character, zero timeouts, a secret that cannot be read or is
    /// shorter than 16 bytes, both secret_file and secret_env).
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

    /// Waits for its turn to compile `key` across every process sharing the server (this file's
    /// description): returns the entry `find` found while waiting, or a lease holding the
    /// key's lock (released, by compare-and-delete, when the lease is destroyed; it must not
    /// outlive this cache), or neither when lock_expiry is 0, the wait passed lock_wait or the
    /// server cannot be used. Never throws CacheError (`find`'s exceptions pass through).
    /// Thread-safe.
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override;
    /// The Redis key of `key`'s compile lock: `<key_prefix>:lock:<key hex>` (outside the
    /// entries' namespace: clear() and server_entries() leave locks to their expiry).
    std::string redis_lock_key(const CacheKey& key) const;

    /// This object's connection and failure counters (thread-safe, never throws).
    RemoteCacheCounters counters() const;
    /// The options it was made with.
    const RemoteCacheOptions& options() const noexcept;
    /// The Redis key of `key`'s entry.
    std::string redis_key(const CacheKey& key) const;
    /// Whether entries are authenticated (a secret was set).
    bool authenticated() const noexcept;

    /// The value stored for `code` under `key`: "ccremote", a seal kind (one byte: 0 SHA-256,
    /// 1 HMAC-SHA-256), the key's 32 bytes, the serialized ObjectCode, then the seal (32 bytes)
    /// of everything before it: HMAC-SHA-256 under `secret`, or SHA-256 when `secret` is empty.
    /// Thread-safe.
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code,
                                    std::string_view secret = {});
    /// The code of a value, checked against `expected` and `secret` (the seal compared in
    /// constant time, then the key, then the code's own checks). Throws SerializationError
    /// naming the key and what failed: no entry, a seal that does not match, an entry sealed
    /// without a secret when `secret` is set (or with one when it is not), another key's entry,
    /// damaged code. Never reads outside `bytes`. Thread-safe.
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected,
                                   std::string_view secret = {});

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudacore
