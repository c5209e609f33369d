/// @file
/// TieredProgramCache: several program caches used as one, fastest first (memory, disk, remote;
/// any subset); a ProgramCache wherever one is taken. get() returns the first hit after storing
/// it in the tiers above; put() writes through. What a tier of the user's own takes from a shared
/// tier keeps that tier's trust, and is served only under the trust it has now (docs/caching.md,
/// the trust table). A tier that throws CacheError is skipped for that call. Thread-safe when its
/// tiers are; holds its tiers.
#pragma once

#include "cudacore/program_cache.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace cudacore {

/// Program caches used as one, fastest first (see this file's description).
class TieredProgramCache final : public ProgramCache {
public:
    /// The tiers, fastest first; reads each one's entry_trust() once. Throws
    /// InvalidArgumentError when `tiers` is empty or holds a null pointer or the same cache twice.
    explicit TieredProgramCache(std::vector<std::shared_ptr<ProgramCache>> tiers);

    /// The first tier's hit, copied into the tiers above (a failed fill counts in failed_stores);
    /// nullopt when none has it. A tier's CacheError counts as its miss. Never throws CacheError.
    std::optional<ObjectCode> get(const CacheKey& key) override;
    /// Stores into every tier. When a tier fails, the others are still written, then CacheError
    /// is thrown with every failing tier's message (counted once in stats().failed_stores), so
    /// compile_cached reports it and goes on.
    void put(const CacheKey& key, const ObjectCode& code) override;
    /// Stores `entries` into every tier with the tier's put_many (a disk tier flushes them
    /// together). When a tier fails, the others are still written, then CacheError is thrown with
    /// every failing tier's message.
    void put_many(const std::vector<std::pair<CacheKey, ObjectCode>>& entries) override;
    /// Stores `entries` with `trust` (ProgramCache::put_many_with_trust) into the tiers of the
    /// user's own, and with put_many into the shared ones (which seal by their own rules). Throws
    /// as put_many does.
    void put_many_with_trust(const std::vector<std::pair<CacheKey, ObjectCode>>& entries,
                             const std::string& trust) override;
    /// get(), with `trust` set to the trust of what it returned: an import's (see get()), a
    /// shared tier's entry_trust(), or empty for what the user's own processes compiled.
    std::optional<ObjectCode> get_with_trust(const CacheKey& key, std::string& trust) override;
    /// hits and misses of this object; insertions that every tier took; failed_stores; the tiers'
    /// corrupt_entries and evictions summed; entries and bytes of the largest tier. A tier whose
    /// stats() throws is left out.
    CacheStats stats() const override;
    /// Clears every tier; the first CacheError is thrown after all were tried.
    void clear() override;
    /// The first tier's turn (ProgramCache::await_compile_turn) that found the entry or gave a
    /// lease; empty when none did. `find` should search this whole cache. Never throws CacheError.
    CompileTurn await_compile_turn(
        const CacheKey& key, const std::function<std::optional<ObjectCode>()>& find) override;
    /// The same, with `cancellation` handed to each tier: a tier's turn that comes back
    /// cancelled ends the wait (returned as it is, asking no further tier). Never throws
    /// CacheError.
    CompileTurn await_compile_turn(const CacheKey& key,
                                   const std::function<std::optional<ObjectCode>()>& find,
                                   const CancellationToken& cancellation) override;

    /// The trusts of its shared tiers (their entry_trust(), read when it was made), joined by
    /// "; "; empty when it has none. Thread-safe.
    std::string entry_trust() const override;

    /// The keys listed by the tiers that list theirs (ProgramCache::entry_keys), each once;
    /// nullopt when no tier can list its entries. Throws the first tier's CacheError.
    std::optional<std::vector<CacheKey>> entry_keys() const override;

    /// The tiers, fastest first.
    const std::vector<std::shared_ptr<ProgramCache>>& tiers() const noexcept { return tiers_; }
    /// Hits answered by each tier (the same order as tiers()).
    std::vector<std::uint64_t> tier_hits() const;

private:
    // Tier `tier`'s entry of `key`, and `trust` set to the trust it came under (`imported`: the
    // trust an own tier's entry was stored with); nullopt on a miss, a CacheError, or an import
    // of a trust this cache does not accept.
    std::optional<ObjectCode> look_up(std::size_t tier, const CacheKey& key, std::string& trust,
                                      bool& imported);
    // Whether an entry stored with `trust` (put_many_with_trust) is served from a tier of the
    // user's own: any, when no shared tier holds a secret; else one of a shared tier's trust.
    bool accepts_import(const std::string& trust) const;

    std::vector<std::shared_ptr<ProgramCache>> tiers_;
    std::vector<std::string> trusts_;  // each tier's entry_trust(), read once
    bool secret_held_ = false;          // a shared tier authenticates its entries with a secret
    std::unique_ptr<std::atomic<std::uint64_t>[]> tier_hits_;
    std::atomic<std::uint64_t> hits_{0}, misses_{0}, insertions_{0}, failed_stores_{0};
};

}  // namespace cudacore
