#include "cudacore/memory_program_cache.hpp"

#include "cache/activity_counters.hpp"
#include "code/object_code_state.hpp"
#include "support/cudacore_trace.hpp"

namespace cudacore {

MemoryProgramCache::MemoryProgramCache(std::uint64_t max_bytes, std::uint64_t max_entries) {
    stats_.max_bytes = max_bytes;
    stats_.max_entries = max_entries;
}

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
    // Another owner of the entry's value: a caller's close() leaves the entry open.
    return detail::ObjectCodeAccess::another_owner(it->second->second, "MemoryProgramCache::get");
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

void MemoryProgramCache::store(const CacheKey& key, const ObjectCode& given, const std::string& trust) {
    // The entry is an owner of its own (the caller's close() does not reach it); a closed value
    // is refused.
    const ObjectCode code = detail::ObjectCodeAccess::another_owner(given, "MemoryProgramCache::put");
    const std::uint64_t size = entry_size(code);
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
        stats_.bytes -= entry_size(it->second->second);
        --stats_.entries;
        recency_.erase(it->second);
        index_.erase(it);
    }
    if (size > stats_.max_bytes) return;  // would evict everything and still not fit
    evict_for(size, 1);
    recency_.push_front(Entry{key, code, trust});
    index_.emplace(key, recency_.begin());
    stats_.bytes += size;
    ++stats_.entries;
    ++stats_.insertions;
    detail::count_tier_event(detail::CacheTier::memory, detail::TierEvent::store);
}

void MemoryProgramCache::evict_for(std::uint64_t bytes, std::uint64_t entries) {
    auto over = [&] {
        // stats_.bytes + bytes > max_bytes, written so that it cannot wrap
        const bool too_many_bytes = stats_.bytes > stats_.max_bytes || bytes > stats_.max_bytes - stats_.bytes;
        const bool too_many_entries = stats_.max_entries != 0 && stats_.entries + entries > stats_.max_entries;
        return too_many_bytes || too_many_entries;
    };
    while (!recency_.empty() && over()) {
        stats_.bytes -= entry_size(recency_.back().second);
        --stats_.entries;
        ++stats_.evictions;
        index_.erase(recency_.back().first);
        recency_.pop_back();
    }
}

void MemoryProgramCache::resize(std::uint64_t max_bytes, std::uint64_t max_entries) noexcept {
    std::lock_guard lock(mutex_);
    stats_.max_bytes = max_bytes;
    stats_.max_entries = max_entries;
    evict_for(0, 0);
}

void MemoryProgramCache::reset_stats() noexcept {
    std::lock_guard lock(mutex_);
    stats_.hits = 0;
    stats_.misses = 0;
    stats_.insertions = 0;
    stats_.evictions = 0;
    stats_.corrupt_entries = 0;
    stats_.failed_stores = 0;
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
