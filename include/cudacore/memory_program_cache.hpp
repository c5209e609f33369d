/// @file
/// MemoryProgramCache: a ProgramCache in this process's memory.
#pragma once

#include "cudacore/program_cache.hpp"

#include <list>
#include <mutex>
#include <unordered_map>

namespace cudacore {

/// A program cache in this process's memory, bounded in bytes and entries (least recently used
/// evicted first). Thread-safe; entries share their bytes with the ObjectCodes handed out.
class MemoryProgramCache final : public ProgramCache {
public:
    /// An empty cache of at most `max_bytes` of code (entry_size()) and `max_entries` entries
    /// (`max_entries` 0: no bound on their number; `max_bytes` is always a bound, 0 storing
    /// nothing).
    explicit MemoryProgramCache(std::uint64_t max_bytes = std::uint64_t{256} << 20, std::uint64_t max_entries = 0);

    /// Sets both bounds and evicts to them; other threads see the old bounds or the new.
    void resize(std::uint64_t max_bytes, std::uint64_t max_entries = 0) noexcept;
    /// Sets the counters of stats() to 0, keeping the entries and the bounds.
    void reset_stats() noexcept;

    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores `code` under `key`, evicting the least recently used to the bounds. An entry larger
    /// than `max_bytes` on its own is not stored, and that is no failure (nothing is counted):
    /// get() then misses. Never throws but std::bad_alloc.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Each entry stored as put() stores it, with `trust` kept beside it.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with the trust its entry was stored with.
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// Counters since construction, and what the cache holds now.
    CacheStats stats() const override;
    void clear() override;
    /// The keys of every entry it holds (most recently used first).
    std::optional<std::vector<CacheKey>> entry_keys() const override;

    /// The bytes an entry is charged for.
    static std::uint64_t entry_size(const ObjectCode& code) noexcept;

private:
    struct Entry {
        CacheKey first;
        ObjectCode second;
        std::string trust;  ///< put_many_with_trust's; empty: stored by put()
    };
    void evict_for(std::uint64_t bytes, std::uint64_t entries);
    void store(const CacheKey& key, const ObjectCode& code, const std::string& trust);

    mutable std::mutex mutex_;
    std::list<Entry> recency_;  ///< most recently used first
    std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash> index_;
    CacheStats stats_;
};

}  // namespace cudacore
