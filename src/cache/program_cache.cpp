// ProgramCache's defaults, for caches that override only get, put, stats and clear.
#include "cudacore/program_cache.hpp"

namespace cudacore {

CompileLease::~CompileLease() = default;

ProgramCache::~ProgramCache() = default;

void ProgramCache::put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) {
    for (const auto& [key, code] : entries) put(key, code);
}

void ProgramCache::put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                       const std::string& trust) {
    (void)trust;  // a cache that keeps no trust stores the entries as its own
    put_many(entries);
}

std::optional<ObjectCode> ProgramCache::get_with_trust(const CacheKey& key, std::string& trust) {
    // A cache that keeps no trust per entry vouches for each as it vouches for itself: a shared
    // cache's entries are whoever writes it's, never "compiled here".
    trust = entry_trust();
    return get(key);
}

CompileTurn ProgramCache::await_compile_turn(
    const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) {
    (void)key;
    (void)find;
    return {};  // a process-local cache has no one else to wait for
}

CompileTurn ProgramCache::await_compile_turn(const CacheKey& key,
                                             const std::function<std::optional<ObjectCode>()>& find,
                                             const CancellationToken& cancellation) {
    if (cancellation.is_cancelled()) {
        CompileTurn turn;
        turn.cancelled = true;
        return turn;
    }
    return await_compile_turn(key, find);
}

std::string ProgramCache::entry_trust() const { return {}; }

std::optional<std::vector<CacheKey>> ProgramCache::entry_keys() const { return std::nullopt; }

}  // namespace cudacore
