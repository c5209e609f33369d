/// @file
/// MemoryProgramCache: a ProgramCache in this process's memory, bounded in bytes (the size of each
/// entry's code, name and symbols), evicting the least recently used entry first. Thread-safe;
/// entries share their bytes with the ObjectCode values handed out (no copies on get).
#pragma once

#include "cudacore/program_cache.hpp"

#include <list>
#include <mutex>
#include <unordered_map>

namespace cudacore {

/// A program cache in this process's memory, bounded by size (LRU).
class MemoryProgramCache final : public ProgramCache {
public:
    /// An empty cache that keeps at most `max_bytes` of code (256 MiB by default), evicting the
    /// least recently used entries. All members are safe from many threads.
    explicit MemoryProgramCache(std::uint64_t max_bytes = std::uint64_t{256} << 20);

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
    void evict_to(std::uint64_t bound);  ///< with mutex_ held
    void store(const CacheKey& key, const ObjectCode& code, const std::string& trust);

    mutable std::mutex mutex_;
    std::list<Entry> recency_;  ///< most recently used first
    std::unordered_map<CacheKey, std::list<Entry>::iterator, CacheKeyHash> index_;
    CacheStats stats_;
};

}  // namespace cudacore
