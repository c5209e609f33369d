/// @file
/// RemoteProgramCache: a ProgramCache on a Redis server, shared by every process and machine that
/// points at it, so a fleet compiles each program once. docs/caching.md states the trust model in
/// full; docs/design/remote-cache.md says how entries, keys, locks and connections work.
///
/// Values. Each entry is checked against the key asked for: sealed by SHA-256 without a secret, by
/// HMAC-SHA-256 under the secret named by RemoteCacheOptions::secret_file or secret_env with one.
/// A value that fails (truncated, damaged, of a newer format, sealed for another key, not
/// authenticated by this cache's secret, or larger than max_entry_bytes) is a miss, counted in
/// CacheStats::corrupt_entries, reported through the warning handler
/// (WarningKind::remote_cache_failed, naming the Redis key and what failed) and never returned;
/// the next put of that key replaces it. clear() removes the prefix's entries of every format.
///
/// Trust. Without a secret the checks catch damage and mix-ups (a value copied under another key,
/// its key field rewritten or not), not a malicious writer: anyone who can write to the server can
/// compute a valid SHA-256 and make every client run code of their choice. With a secret, a writer
/// without it can delete entries or replace them with values that are refused (each a miss and a
/// warning, then a compile), and can copy an entry only under its own key; it cannot make a client
/// accept code it did not get from a holder of the secret. Anyone who can read the server (or the
/// network path without TLS) reads the code: the secret authenticates, it does not encrypt.
///
/// Failure is never fatal. A server that is down, unreachable, slow (past the timeouts), refusing
/// the credentials or out of memory makes get() a miss (it never throws) and put() a failed store
/// (counted in CacheStats::failed_stores; see put() for when it throws). After a connection-level
/// failure, gets miss and puts are skipped without touching the network for `retry_after`
/// (doubled after each failed retry, up to `max_retry_after`). Each failure is reported through the
/// warning handler once per cause, and again only after the server has worked in between. A peer
/// that resets the connection never raises SIGPIPE in the process.
///
/// Bounds. A get() or put() returns within connect_timeout + operation_timeout whatever the server,
/// the path or the resolver does (trickle its bytes, stall, reset, not answer a host name's
/// lookup), then counts as a failure. No reply is read past max_entry_bytes (a first line past 64
/// KiB), and the objects parsed from one never take more memory than max_entry_bytes and 64 KiB
/// (each element of every array counted, at every nesting level; an array whose count cannot fit
/// is refused from its count): a server cannot make a client hold more (counters().bytes_received
/// counts what was read). Decoding a value counts what its value will take before allocating it:
/// its code and name their size, its symbol map at most 64 MiB (each symbol its tree node, about
/// 128 bytes, however short its names). A reply refused for its size, or a value whose decoding
/// would pass that bound (refused with the numbers), is a failure like the others: the cache
/// backs off.
///
/// One compile per key across the fleet. When compile_cached() or get_or_compile() miss, one
/// process compiles the key (it holds the key's lock on the server, which expires after
/// lock_expiry) while the others wait for its entry, for lock_wait at most: then they compile
/// themselves (RemoteCacheCounters::lock_wait_timeouts). A compile that runs longer than
/// lock_expiry lets a waiter compile the same key too (two compiles, never a wrong entry; counted
/// in locks_lost). A server that cannot be used while locking or waiting lets the caller compile
/// at once; an ACL user needs EVAL to release a lock (without it each lock is left to expire,
/// warned once).
///
/// TLS. A `rediss://` server (RemoteCacheOptions::tls) is reached over TLS 1.2 or later. The
/// server's certificate must chain to tls_ca_file (or to the system's CAs) and name the host of
/// the URL (its DNS name, or its IP address); a client certificate is sent where the server asks
/// for one. A server that fails the check is a connection failure like any other (warned once,
/// cause "TLS"), never a connection without verification.
///
/// Thread-safe. A fork()ed child may go on using the object (it opens its own connections).
/// Security: cached code runs on your GPUs: without a secret the server must be writable only by
/// those you trust as much as your compiler (an ACL user of its own); with one, only holders of
/// the secret are.
#pragma once

#include "cudacore/program_cache.hpp"
#include "cudacore/remote_cache_options.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace cudacore {

/// A program cache on a Redis server (format, failures and threads: this file's description).
class RemoteProgramCache final : public ProgramCache {
public:
    /// Connects lazily: constructing never touches the network and never fails for the server's
    /// state. Reads the secret (secret_file or secret_env) once. Throws InvalidArgumentError for
    /// options that cannot work (no host, a port outside 1..65535, a negative database, a key
    /// prefix with a pattern character, zero timeouts, a secret that cannot be read or is
    /// shorter than 16 bytes, a secret_file that is not a regular file or is over 4096 bytes,
    /// both secret_file and secret_env), naming the file or variable and its option. Warns
    /// (WarningKind::secret_file_exposed) when others than its owner can access secret_file.
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
    /// The same wait, given up when `cancellation` is cancelled: the token is read before each
    /// try of the lock and at least every 10 ms while it sleeps between tries, and then the turn
    /// comes back with `cancelled` set, no lease held (a lock taken is kept only by a turn that
    /// returns it) and nothing found. Never throws CacheError. Thread-safe.
    CompileTurn await_compile_turn(const CacheKey& key,
                                   const std::function<std::optional<ObjectCode>()>& find,
                                   const CancellationToken& cancellation) override;
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
    /// "redis sealed by SHA-256" without a secret; with one "redis sealed by HMAC-SHA-256 under
    /// <fingerprint>", the fingerprint an HMAC of a fixed text under the secret (it reveals
    /// nothing of the secret): a TieredProgramCache keeps what it copies from this cache apart
    /// for each (ProgramCache::entry_trust()). Fixed when the cache is made; thread-safe.
    std::string entry_trust() const override;

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
