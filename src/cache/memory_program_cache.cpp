#include "cudacore/memory_program_cache.hpp"

#include "cache/activity_counters.hpp"
#include "support/cudacore_trace.hpp"

namespace cudacore {

MemoryProgramCache::MemoryProgramCache(std::uint64_t max_bytes) { stats_.max_bytes = max_bytes; }

std::uint64_t MemoryProgramCache::entry_size(const ObjectCode& code) noexcept {
    std::uint64_t size = code.size() + code.name().size();
    for (const auto& [expression, lowered] : code.symbol_map()) size += expression.size() + lowered.size();
    return size;
}

std::optional<ObjectCode> MemoryProgramCache::get(const CacheKey& key) {
    std::string trust;
    return get_with_trust(key, trust);
}

std::optional<ObjectCode> MemoryProgramCache::get_with_trust(const CacheKey& key, std::string& trust) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get memory");
    trust.clear();
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
        ++stats_.misses;
        detail::count_tier_event(detail::CacheTier::memory, detail::TierEvent::miss);
        return std::nullopt;
    }
    recency_.splice(recency_.begin(), recency_, it->second);
    ++stats_.hits;
    detail::count_tier_event(detail::CacheTier::memory, detail::TierEvent::hit);
    trust = it->second->trust;
    return it->second->second;
}

void MemoryProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put memory");
    store(key, code, {});
}

void MemoryProgramCache::put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                             const std::string& trust) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put memory");
    for (const auto& [key, code] : entries) store(key, code, trust);
}

void MemoryProgramCache::store(const CacheKey& key, const ObjectCode& code, const std::string& trust) {
    const std::uint64_t size = entry_size(code);
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        stats_.bytes -= entry_size(it->second->second);
        --stats_.entries;
        recency_.erase(it->second);
        index_.erase(it);
    }
    if (size > stats_.max_bytes) return;  // would evict everything and still not fit
    evict_to(stats_.max_bytes - size);
    recency_.push_front(Entry{key, code, trust});
    index_.emplace(key, recency_.begin());
    stats_.bytes += size;
    ++stats_.entries;
    ++stats_.insertions;
    detail::count_tier_event(detail::CacheTier::memory, detail::TierEvent::store);
}

void MemoryProgramCache::evict_to(std::uint64_t bound) {
    while (stats_.bytes > bound && !recency_.empty()) {
        stats_.bytes -= entry_size(recency_.back().second);
        --stats_.entries;
        ++stats_.evictions;
        index_.erase(recency_.back().first);
        recency_.pop_back();
    }
}

CacheStats MemoryProgramCache::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

void MemoryProgramCache::clear() {
    std::lock_guard lock(mutex_);
    recency_.clear();
    index_.clear();
    stats_.entries = 0;
    stats_.bytes = 0;
}

std::optional<std::vector<CacheKey>> MemoryProgramCache::entry_keys() const {
    std::lock_guard lock(mutex_);
    std::vector<CacheKey> keys;
    keys.reserve(recency_.size());
    for (const auto& entry : recency_) keys.push_back(entry.first);
    return keys;
}

}  // namespace cudacore
