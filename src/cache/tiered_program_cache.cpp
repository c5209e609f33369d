#include "cudacore/tiered_program_cache.hpp"

#include "cudacore/errors.hpp"

#include "support/cudacore_trace.hpp"

#include <set>

namespace cudacore {

TieredProgramCache::TieredProgramCache(std::vector<std::shared_ptr<ProgramCache>> tiers)
    : tiers_(std::move(tiers)) {
    if (tiers_.empty()) throw InvalidArgumentError("TieredProgramCache: no tier given");
    std::set<const ProgramCache*> seen;
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        if (!tiers_[i])
            throw InvalidArgumentError("TieredProgramCache: tier " + std::to_string(i) + " is null");
        if (!seen.insert(tiers_[i].get()).second)
            throw InvalidArgumentError("TieredProgramCache: tier " + std::to_string(i) +
                                       " is the same cache as an earlier tier");
    }
    tier_hits_ = std::make_unique<std::atomic<std::uint64_t>[]>(tiers_.size());
}

std::optional<ObjectCode> TieredProgramCache::get(const CacheKey& key) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get tiered");
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        std::optional<ObjectCode> code;
        try {
            code = tiers_[i]->get(key);
        } catch (const CacheError&) {
            continue;  // this tier cannot be read now: the next one may have it
        }
        if (!code) continue;
        for (std::size_t above = 0; above < i; ++above) {
            try {
                tiers_[above]->put(key, *code);
            } catch (const CacheError&) {
                ++failed_stores_;
            }
        }
        ++tier_hits_[i];
        ++hits_;
        return code;
    }
    ++misses_;
    return std::nullopt;
}

void TieredProgramCache::put(const CacheKey& key, const ObjectCode& code) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put tiered");
    std::string failures;
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        try {
            tiers_[i]->put(key, code);
        } catch (const CacheError& e) {
            failures += (failures.empty() ? "" : "; ") + std::string("tier ") + std::to_string(i) +
                        ": " + e.what();
        }
    }
    if (!failures.empty()) {
        ++failed_stores_;
        throw CacheError("TieredProgramCache::put as " + key.hex() + ": " + failures);
    }
    ++insertions_;
}

CacheStats TieredProgramCache::stats() const {
    CacheStats total;
    total.hits = hits_;
    total.misses = misses_;
    total.insertions = insertions_;
    total.failed_stores = failed_stores_;
    bool first = true;
    for (const auto& tier : tiers_) {
        CacheStats stats;
        try {
            stats = tier->stats();
        } catch (const CacheError&) {
            continue;
        }
        total.corrupt_entries += stats.corrupt_entries;
        total.evictions += stats.evictions;
        if (first || stats.entries > total.entries) {
            total.entries = stats.entries;
            total.bytes = stats.bytes;
            total.max_bytes = stats.max_bytes;
            total.temporary_files = stats.temporary_files;
            first = false;
        }
    }
    return total;
}

void TieredProgramCache::clear() {
    std::optional<CacheError> first_failure;
    for (const auto& tier : tiers_) {
        try {
            tier->clear();
        } catch (const CacheError& e) {
            if (!first_failure) first_failure = e;
        }
    }
    if (first_failure) throw *first_failure;
}

CompileTurn TieredProgramCache::await_compile_turn(
    const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) {
    for (const auto& tier : tiers_) {
        CompileTurn turn;
        try {
            turn = tier->await_compile_turn(key, find);
        } catch (const CacheError&) {
            continue;  // this tier cannot coordinate now: the caller may still compile
        }
        if (turn.found || turn.lease) return turn;
    }
    return {};
}

std::vector<std::uint64_t> TieredProgramCache::tier_hits() const {
    std::vector<std::uint64_t> hits;
    for (std::size_t i = 0; i < tiers_.size(); ++i) hits.push_back(tier_hits_[i]);
    return hits;
}

}  // namespace cudacore
