/// @file
/// TieredProgramCache: several program caches used as one, fastest first (memory, disk, remote;
/// any subset). Guide: docs/caching.md (the trust table for imported entries).
#pragma once

#include "cudacore/program_cache.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace cudacore {

/// Program caches used as one, fastest first: a hit is stored in the tiers above, put() writes
/// through. A tier's CacheError skips it. Holds its tiers; thread-safe when they are.
class TieredProgramCache final : public ProgramCache {
public:
    /// The tiers, fastest first. InvalidArgumentError when empty, null or repeated.
    explicit TieredProgramCache(std::vector<std::shared_ptr<ProgramCache>> tiers);

    /// The first tier's hit, copied into the tiers above; nullopt when none has it.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores into every tier; CacheError names every failing tier.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Stores `entries` into every tier with its put_many; CacheError names every failing tier.
    void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) override;
    /// Stores `entries` with `trust` into the user's own tiers, plainly into shared ones.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with `trust` set to the trust of what it returned.
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// This object's hits and misses; the tiers' other counters summed; the largest tier's size.
    CacheStats stats() const override;
    /// Clears every tier.
    void clear() override;
    /// The first tier's turn that found the entry or gave a lease; `find` searches this cache.
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override;
    /// The same; a tier's cancelled turn ends the wait.
    CompileTurn await_compile_turn(const CacheKey& key,
                                   const std::function<std::optional<ObjectCode>()>& find,
                                   const CancellationToken& cancellation) override;

    /// The trusts of its shared tiers joined by "; "; empty when none.
    std::string entry_trust() const override;

    /// The keys the tiers that can list theirs hold, each once; nullopt when none can.
    std::optional<std::vector<CacheKey>> entry_keys() const override;

    /// The tiers, fastest first.
    const std::vector<std::shared_ptr<ProgramCache>>& tiers() const noexcept { return tiers_; }
    /// Hits answered by each tier (the same order as tiers()).
    std::vector<std::uint64_t> tier_hits() const;

private:
    // Tier `tier`'s entry of `key` and its trust; nullopt on a miss, error, or refused import.
    std::optional<ObjectCode> look_up(std::size_t tier, const CacheKey& key, std::string& trust,
                                      bool& imported);
    // Whether an entry imported with `trust` is served from a tier of the user's own.
    bool accepts_import(const std::string& trust) const;

    std::vector<std::shared_ptr<ProgramCache>> tiers_;
    std::vector<std::string> trusts_;  // each tier's entry_trust(), read once
    bool secret_held_ = false;          // a shared tier authenticates its entries with a secret
    std::unique_ptr<std::atomic<std::uint64_t>[]> tier_hits_;
    std::atomic<std::uint64_t> hits_{0}, misses_{0}, insertions_{0}, failed_stores_{0};
};

}  // namespace cudacore
