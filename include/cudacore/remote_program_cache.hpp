/// @file
/// RemoteProgramCache: a ProgramCache on a Redis server, shared by every process and machine that
/// points at it, so a fleet compiles each program once. Every value is sealed (SHA-256, or
/// HMAC-SHA-256 under a secret) and checked against its key: a bad one is a miss, counted and
/// warned about. Failure is never fatal: a server down, slow or refusing makes get() a miss and
/// put() a failed store, and the cache backs off; every call returns within connect_timeout +
/// operation_timeout, and no reply is read past max_entry_bytes. Without a secret, whoever can
/// write to the server chooses the code your GPUs run. Trust, TLS and compile locks:
/// docs/caching.md, "A cache shared by a fleet"; the mechanism: docs/design/remote-cache.md.
/// Thread-safe; a fork()ed child may go on using the object.
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
    /// Connects lazily: constructing never touches the network. Reads the secret once. Throws
    /// InvalidArgumentError, naming the option, for options that cannot work (no host, bad port
    /// or database, a pattern character in the prefix, zero timeouts, an unreadable secret or one
    /// under 16 bytes, both secret_file and secret_env). Warns (WarningKind::secret_file_exposed)
    /// when others than its owner can access secret_file.
    explicit RemoteProgramCache(RemoteCacheOptions options);
    ~RemoteProgramCache() override;
    RemoteProgramCache(const RemoteProgramCache&) = delete;
    RemoteProgramCache& operator=(const RemoteProgramCache&) = delete;

    /// The entry stored under `key`, checked; nullopt on a miss, a bad value (counted corrupt), a
    /// failure or while backing off. Never throws CacheError.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key` (SET, EX when options.expiry is set). Throws CacheError naming
    /// the server, key and cause when the store was tried and failed (counted in
    /// stats().failed_stores); skipped without throwing while the cache backs off
    /// (counters().skipped); an entry over max_entry_bytes is not stored (counters().oversized).
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

    /// Waits for this process's turn to compile `key` across the fleet: returns the entry `find`
    /// found meanwhile, or a lease holding the key's lock (released when destroyed; it must not
    /// outlive the cache), or neither (lock_expiry 0, lock_wait passed, server unusable). Never
    /// throws CacheError (`find`'s exceptions pass through). Thread-safe.
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override;
    /// The same wait, given up when `cancellation` is cancelled (read at least every 10 ms): the
    /// turn comes back with `cancelled` set, no lease and nothing found. Never throws CacheError.
    /// Thread-safe.
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
    /// "redis sealed by SHA-256", or with a secret "redis sealed by HMAC-SHA-256 under
    /// <fingerprint>" (reveals nothing of the secret); ProgramCache::entry_trust(). Thread-safe.
    std::string entry_trust() const override;

    /// The value stored for `code` under `key`: "ccremote", a seal kind byte, the key, the
    /// serialized code, then the HMAC-SHA-256 under `secret` (SHA-256 when empty) of all before
    /// it. Thread-safe.
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code,
                                    std::string_view secret = {});
    /// The code of a value, checked against `expected` and `secret` (seal in constant time, key,
    /// then the code's own checks). Throws SerializationError naming the key and what failed.
    /// Never reads outside `bytes`. Thread-safe.
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected,
                                   std::string_view secret = {});

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudacore
