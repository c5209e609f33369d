#include "cudacore/tiered_program_cache.hpp"

#include "cudacore/errors.hpp"

#include "cache/entry_trust.hpp"
#include "support/cudacore_trace.hpp"

#include <algorithm>

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
    for (const auto& tier : tiers_) trusts_.push_back(tier->entry_trust());
    for (const std::string& trust : trusts_) secret_held_ = secret_held_ || detail::trust_holds_secret(trust);
}

bool TieredProgramCache::accepts_import(const std::string& trust) const {
    if (!secret_held_) return true;
    return std::find(trusts_.begin(), trusts_.end(), trust) != trusts_.end();
}

namespace {

// The key under which tiers of this user's own keep `key`'s code copied from a shared tier of
// trust `trust` (ProgramCache::entry_trust()): apart from what they compiled, and from what
// another trust gave.
CacheKey key_under_trust(const CacheKey& key, const std::string& trust) {
    return CacheKey::of_bytes("cudacore entry copied from a shared cache\n" +
                              std::to_string(trust.size()) + "\n" + trust + "\n" + key.hex());
}

}  // namespace

std::optional<ObjectCode> TieredProgramCache::look_up(std::size_t tier, const CacheKey& key,
                                                      std::string& trust, bool& imported) {
    imported = false;
    try {
        std::string stored;
        if (std::optional<ObjectCode> code = tiers_[tier]->get_with_trust(key, stored)) {
            // An import is served only under a trust this cache accepts: one that came unsigned,
            // or under another secret, is not served where a shared tier holds a secret.
            if (stored.empty() || !trusts_[tier].empty()) {
                trust = trusts_[tier];
                return code;
            }
            if (accepts_import(stored)) {
                trust = std::move(stored);
                imported = true;
                return code;
            }
        }
        if (!trusts_[tier].empty()) return std::nullopt;
        // A tier of this user's: also what it holds from the shared tiers below, each under
        // its trust of now (what an earlier trust gave is never looked for). Only a copy this
        // cache made counts: the key is public (worked out from the shared tier's trust), so an
        // entry imported under it keeps the trust it came with and is not served as the tier's.
        for (std::size_t below = tier + 1; below < tiers_.size(); ++below) {
            if (trusts_[below].empty()) continue;
            std::string copied;
            std::optional<ObjectCode> code = tiers_[tier]->get_with_trust(key_under_trust(key, trusts_[below]), copied);
            if (code && copied.empty()) {
                trust = trusts_[below];
                return code;
            }
        }
    } catch (const CacheError&) {
        // This tier cannot be read now: the next one may have it.
    }
    return std::nullopt;
}

std::optional<ObjectCode> TieredProgramCache::get(const CacheKey& key) {
    std::string trust;
    return get_with_trust(key, trust);
}

std::optional<ObjectCode> TieredProgramCache::get_with_trust(const CacheKey& key, std::string& trust) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache get tiered");
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        bool imported = false;
        std::optional<ObjectCode> code = look_up(i, key, trust, imported);
        if (!code) continue;
        // Copied up under the key of its trust into tiers of this user's (an import keeps its
        // key and its trust); a shared tier takes it under its own key (its readers check it by
        // their own rules).
        for (std::size_t above = 0; above < i; ++above) {
            const bool apart = !trust.empty() && trusts_[above].empty();
            try {
                if (imported && trusts_[above].empty()) {
                    tiers_[above]->put_many_with_trust({{key, *code}}, trust);
                } else {
                    tiers_[above]->put(apart ? key_under_trust(key, trust) : key, *code);
                }
            } catch (const CacheError&) {
                ++failed_stores_;
            }
        }
        ++tier_hits_[i];
        ++hits_;
        return code;
    }
    ++misses_;
    trust.clear();
    return std::nullopt;
}

void TieredProgramCache::put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                                             const std::string& trust) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put_many tiered");
    std::string failures;
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        try {
            if (trusts_[i].empty()) {
                tiers_[i]->put_many_with_trust(entries, trust);
            } else if (trust.empty() || trust == trusts_[i]) {
                tiers_[i]->put_many(entries);
            }
            // A shared tier of another trust takes nothing that trust did not vouch for: it would
            // seal the entries as its own for every client (docs/caching.md, "Trust").
        } catch (const CacheError& e) {
            failures += (failures.empty() ? "" : "; ") + std::string("tier ") + std::to_string(i) +
                        ": " + e.what();
        }
    }
    if (!failures.empty()) {
        ++failed_stores_;
        throw CacheError("TieredProgramCache::put_many of " + std::to_string(entries.size()) +
                         " entries: " + failures);
    }
    insertions_ += entries.size();
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

void TieredProgramCache::put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) {
    const detail::CudacoreRange range(tracing::CudacoreCategory::cache, "cache put_many tiered");
    std::string failures;
    for (std::size_t i = 0; i < tiers_.size(); ++i) {
        try {
            tiers_[i]->put_many(entries);
        } catch (const CacheError& e) {
            failures += (failures.empty() ? "" : "; ") + std::string("tier ") + std::to_string(i) +
                        ": " + e.what();
        }
    }
    if (!failures.empty()) {
        ++failed_stores_;
        throw CacheError("TieredProgramCache::put_many of " + std::to_string(entries.size()) +
                         " entries: " + failures);
    }
    insertions_ += entries.size();
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
    return await_compile_turn(key, find, CancellationToken{});
}

CompileTurn TieredProgramCache::await_compile_turn(
    const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find,
    const CancellationToken& cancellation) {
    for (const auto& tier : tiers_) {
        CompileTurn turn;
        try {
            turn = tier->await_compile_turn(key, find, cancellation);
        } catch (const CacheError&) {
            continue;  // this tier cannot coordinate now: the caller may still compile
        }
        if (turn.found || turn.lease || turn.cancelled) return turn;
    }
    return {};
}

std::string TieredProgramCache::entry_trust() const {
    std::string trust;
    for (const std::string& tier : trusts_) {
        if (!tier.empty()) trust += (trust.empty() ? "" : "; ") + tier;
    }
    return trust;
}

std::optional<std::vector<CacheKey>> TieredProgramCache::entry_keys() const {
    std::optional<std::vector<CacheKey>> keys;
    for (const auto& tier : tiers_) {
        std::optional<std::vector<CacheKey>> listed = tier->entry_keys();
        if (!listed) continue;
        if (!keys) keys.emplace();
        keys->insert(keys->end(), listed->begin(), listed->end());
    }
    if (keys) {  // a key several tiers hold is listed once
        std::sort(keys->begin(), keys->end());
        keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
    }
    return keys;
}

std::vector<std::uint64_t> TieredProgramCache::tier_hits() const {
    std::vector<std::uint64_t> hits;
    for (std::size_t i = 0; i < tiers_.size(); ++i) hits.push_back(tier_hits_[i]);
    return hits;
}

}  // namespace cudacore
