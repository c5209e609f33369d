/// @file
/// MemoryProgramCache: a ProgramCache in this process's memory, bounded in bytes (the size of each
/// entry's code, name and symbols) and, where asked, in entries, evicting the least recently used
/// entry first. Both bounds can be changed while it is in use (resize()) and its counters reset
/// (reset_stats()), as jitify's program cache can. Thread-safe; entries share their bytes with the
/// ObjectCode values handed out (no copies on get).
#pragma once

#include "cudacore/program_cache.hpp"

#include <list>
#include <mutex>
#include <unordered_map>

namespace cudacore {

/// A program cache in this process's memory, bounded by size and count (LRU).
class MemoryProgramCache final : public ProgramCache {
public:
    /// An empty cache that keeps at most `max_bytes` of code (256 MiB by default) and at most
    /// `max_entries` entries (0, the default: no bound on the count), evicting the least recently
    /// used entries. All members are safe from many threads.
    explicit MemoryProgramCache(std::uint64_t max_bytes = std::uint64_t{256} << 20, std::uint64_t max_entries = 0);

    /// Sets both bounds (max_entries 0: no bound on the count) and evicts the least recently used
    /// entries until the cache is within them, counting them in stats().evictions; later puts
    /// keep to the new bounds. Thread-safe (gets and puts of other threads see the old bounds or
    /// the new, never half of them); never throws.
    void resize(std::uint64_t max_bytes, std::uint64_t max_entries = 0) noexcept;
    /// Sets the counters of stats() (hits, misses, insertions, evictions, corrupt_entries,
    /// failed_stores) to 0, keeping the entries and the bounds (entries, bytes, max_bytes and
    /// max_entries still say what the cache holds). Thread-safe; never throws.
    void reset_stats() noexcept;

    std::optional<ObjectCode> get(const CacheKey& key) override;
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Each entry stored as put() stores it, with `trust` kept beside it (ProgramCache).
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with the trust its entry was stored with.
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// Counters since construction, and what the cache holds now.
    CacheStats stats() const override;
    void clear() override;
    /// The keys of every entry it holds (most recently used first). Never throws CacheError.
    std::optional<std::vector<CacheKey>> entry_keys() const override;

    /// The bytes an entry is charged for.
    static std::uint64_t entry_size(const ObjectCode& code) noexcept;

private:
    struct Entry {
        CacheKey first;
        ObjectCode second;
        std::string trust;  ///< put_many_with_trust's; empty: stored by put()
    };
    /// Evicts until `bytes` and `entries` more would fit; with mutex_ held.
    void evict_for(std::uint64_t bytes, std::uint64_t entries);
    void store(const CacheKey& key, const ObjectCode& code, const std::string& trust);

    mutable std::mutex mutex_;
    std::list<Entry> recency_;  ///< most recently used first
    std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash> index_;
    CacheStats stats_;
};

}  // namespace cudacore
