/// @file
/// RemoteProgramCache: a ProgramCache on a Redis server shared by a fleet. Values are sealed
/// (without a secret, whoever can write to the server chooses the code your GPUs run). Guide:
/// docs/caching.md, "A cache shared by a fleet"; mechanism: docs/design/remote-cache.md. A library
/// of its own, not in cudacore.hpp: link cudacore::remote (find_package(cudacore COMPONENTS remote)).
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

/// A program cache on a Redis server. Failure is never fatal: a server down, slow or refusing
/// makes get() a miss and put() a failed store, and the cache backs off; every call returns
/// within connect_timeout + operation_timeout. Thread-safe; a fork()ed child may go on using it.
class RemoteProgramCache final : public ProgramCache {
public:
    /// Connects lazily. InvalidArgumentError naming an option that cannot work.
    explicit RemoteProgramCache(RemoteCacheOptions options);
    ~RemoteProgramCache() override;
    RemoteProgramCache(const RemoteProgramCache&) = delete;
    RemoteProgramCache& operator=(const RemoteProgramCache&) = delete;

    /// The entry stored under `key`, checked; nullopt on a miss or failure.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key`; CacheError naming the server, key and cause.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// This object's counters (entries and bytes 0: see server_entries()).
    CacheStats stats() const override;
    /// Removes every entry under the key prefix (SCAN, UNLINK): the keys of an entry's form
    /// (`<prefix>:v<format>:<64 hex digits>`, any format), not a longer prefix's nor other keys.
    /// Throws CacheError, also for a SCAN that has not ended within a bound the database's size
    /// (DBSIZE) sets. Not bounded by operation_timeout as a whole (one bound per call).
    void clear() override;
    /// How many entries under the key prefix the server holds (a SCAN, as clear() walks it).
    /// Throws CacheError.
    std::uint64_t server_entries();

    /// This process's turn to compile `key` across the fleet: found, a lease, or neither.
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override;
    /// The same wait, given up (`cancelled`, no lease) when `cancellation` is cancelled.
    CompileTurn await_compile_turn(const CacheKey& key,
                                   const std::function<std::optional<ObjectCode>()>& find,
                                   const CancellationToken& cancellation) override;
    /// The Redis key of `key`'s compile lock: `<key_prefix>:lock:<key hex>`.
    std::string redis_lock_key(const CacheKey& key) const;

    /// This object's connection and failure counters.
    RemoteCacheCounters counters() const;
    /// The options it was made with.
    const RemoteCacheOptions& options() const noexcept;
    /// The Redis key of `key`'s entry.
    std::string redis_key(const CacheKey& key) const;
    /// Whether entries are authenticated (a secret was set).
    bool authenticated() const noexcept;
    /// "redis sealed by SHA-256" (or HMAC-SHA-256 under a secret's fingerprint).
    std::string entry_trust() const override;

    /// The value stored for `code` under `key`, sealed under `secret` (SHA-256 when empty).
    static std::string encode_entry(const CacheKey& key, const ObjectCode& code,
                                    std::string_view secret = {});
    /// The code of a value, checked. SerializationError; never reads outside `bytes`.
    static ObjectCode decode_entry(std::string_view bytes, const CacheKey& expected,
                                   std::string_view secret = {});

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace cudacore
