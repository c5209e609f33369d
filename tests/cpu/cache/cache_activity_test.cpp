// cache_stats(): the process-wide counters of each kind of tier, under its name, of the compiles
// made on misses and of the code returned without being stored, counted where each event happens,
// from many threads at once, and reset on request; a tier the public struct does not name is
// counted under its own name.
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tiered_program_cache.hpp"
#include "cudacore/warnings.hpp"

#include "cache/activity_counters.hpp"

#include <cstdlib>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

CacheKey key_of(int n) { return CacheKey::of_bytes("activity key " + std::to_string(n)); }
ObjectCode code_of(int n) {
    return ObjectCode::from_cubin(std::string(64 + n, static_cast<char>('a' + n % 26)),
                                  "code-" + std::to_string(n));
}

void expect_tier(const TierActivity& tier, std::uint64_t hits, std::uint64_t misses,
                 std::uint64_t stores, std::uint64_t failures, const char* name) {
    EXPECT_EQ(tier.hits, hits) << name;
    EXPECT_EQ(tier.misses, misses) << name;
    EXPECT_EQ(tier.stores, stores) << name;
    EXPECT_EQ(tier.failures, failures) << name;
}

TEST(CacheActivity, MemoryAndDiskTiersAreCountedAndReset) {
    reset_cache_stats();
    test::TempDir dir;
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "cache");
    TieredProgramCache tiered({memory, disk});
    EXPECT_FALSE(tiered.get(key_of(1)));  // a miss in both
    tiered.put(key_of(1), code_of(1));    // a store in both
    EXPECT_TRUE(tiered.get(key_of(1)));   // a memory hit
    MemoryProgramCache other;
    EXPECT_FALSE(other.get(key_of(1)));   // every object of a kind is summed
    EXPECT_EQ(disk->get(key_of(1)), code_of(1));

    GlobalCacheStats stats = cache_stats();
    expect_tier(stats.tier("memory"), 1, 2, 1, 0, "memory");
    expect_tier(stats.tier("disk"), 1, 1, 1, 0, "disk");
    expect_tier(stats.tier("remote"), 0, 0, 0, 0, "remote");
    EXPECT_EQ(stats.compiles, 0u);
    ASSERT_TRUE(stats.tiers.contains("memory"));
    ASSERT_TRUE(stats.tiers.contains("disk"));
    expect_tier(stats.tiers.at("disk"), 1, 1, 1, 0, "disk in tiers");

    reset_cache_stats();
    stats = cache_stats();
    expect_tier(stats.tier("memory"), 0, 0, 0, 0, "memory");
    expect_tier(stats.tier("disk"), 0, 0, 0, 0, "disk");
    EXPECT_EQ(memory->stats().hits, 1u);  // the objects' own counters are left alone
}

TEST(CacheActivity, DiskFailuresAreCounted) {
    reset_cache_stats();
    test::TempDir dir;
    DiskProgramCache disk(dir.path() / "cache");
    disk.put(key_of(2), code_of(2));
    // A damaged entry: every file under the cache folder holding the code is cut short.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() / "cache")) {
        if (entry.is_regular_file() && entry.file_size() > 64) std::filesystem::resize_file(entry.path(), 40);
    }
    EXPECT_FALSE(disk.get(key_of(2)));
    const GlobalCacheStats stats = cache_stats();
    EXPECT_EQ(stats.tier("disk").stores, 1u);
    EXPECT_EQ(stats.tier("disk").misses, 1u);
    EXPECT_EQ(stats.tier("disk").failures, 1u);
}

TEST(CacheActivity, CompilesOnMissesAndTheirTimeAreCounted) {
    reset_cache_stats();
    MemoryProgramCache cache;
    auto slow = [] {
        std::this_thread::sleep_for(30ms);
        return code_of(3);
    };
    EXPECT_EQ(get_or_compile(cache, key_of(3), slow), code_of(3));
    EXPECT_EQ(get_or_compile(cache, key_of(3), slow), code_of(3));  // a hit: no compile
    EXPECT_THROW(get_or_compile(cache, key_of(4), []() -> ObjectCode {
                     throw InvalidArgumentError("this compile fails");
                 }),
                 InvalidArgumentError);
    const GlobalCacheStats stats = cache_stats();
    EXPECT_EQ(stats.compiles, 2u);  // the failed one too
    EXPECT_GE(stats.compile_time, 30ms);
    EXPECT_LT(stats.compile_time, 10s);
    expect_tier(stats.tier("memory"), 1, 2, 1, 0, "memory");  // one lookup per call
}

// Code compile_cached returns without storing it is counted (cache_stats().not_cached) besides the
// not_cached warning: a program whose lookups cannot be known, and one whose check compile cannot
// run because the compile worker is missing (where it is, nothing is ever cached). reset clears it.
TEST(CacheActivity, CodeReturnedWithoutBeingStoredIsCounted) {
    reset_cache_stats();
    test::TempDir dir;
    test::write_file(dir.path() / "x.h", "#define VALUE 5\n");
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (dir.path() / "k.cu").string();
    options.toolkit_include_path = false;
    MemoryProgramCache cache;
    test::WarningLog warnings;
    Program by_macro("#define HEADER \"x.h\"\n#include HEADER\nextern \"C\" __global__ void k(int* o) { *o = VALUE; }\n",
                     SourceType::cxx, options);
    compile_cached(by_macro, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_EQ(cache_stats().not_cached, 1u);
    ::setenv("CUDACORE_COMPILE_WORKER", (dir.path() / "no-such-worker").c_str(), 1);
    Program plain("extern \"C\" __global__ void k(int* o) { *o = 7; }\n", SourceType::cxx, options);
    const ObjectCode code = compile_cached(plain, CodeType::ptx, {}, {.cache = &cache});
    ::unsetenv("CUDACORE_COMPILE_WORKER");
    EXPECT_NE(code.code().find("7;"), std::string_view::npos);
    EXPECT_EQ(cache.stats().insertions, 0u);
    EXPECT_EQ(cache_stats().not_cached, 2u);
    ASSERT_EQ(warnings.seen.size(), 2u);
    EXPECT_EQ(warnings.seen[1].kind, WarningKind::not_cached);
    EXPECT_NE(warnings.seen[1].message.find("compile worker could not run"), std::string::npos)
        << warnings.seen[1].message;
    reset_cache_stats();
    EXPECT_EQ(cache_stats().not_cached, 0u);
}

TEST(CacheActivity, CountsFromManyThreadsAreExact) {
    reset_cache_stats();
    MemoryProgramCache cache;
    cache.put(key_of(5), code_of(5));
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 1000; ++i) {
                cache.get(key_of(5));
                cache.get(key_of(6));
            }
        });
    }
    for (auto& thread : threads) thread.join();
    const GlobalCacheStats stats = cache_stats();
    EXPECT_EQ(stats.tier("memory").hits, 8000u);
    EXPECT_EQ(stats.tier("memory").misses, 8000u);
    EXPECT_EQ(stats.tier("memory").stores, 1u);
}

// A tier that src/cache does not know: its own counters, and nothing else, make it a tier of
// cache_stats().
constinit detail::CacheTier test_tier{"test tier"};

TEST(CacheActivity, ANewTierIsCountedUnderItsOwnName) {
    reset_cache_stats();
    expect_tier(cache_stats().tier("test tier"), 0, 0, 0, 0, "test tier before it counts");
    detail::TierCounter hits(test_tier, detail::TierEvent::hit);
    ++hits;
    ++hits;
    test_tier.count(detail::TierEvent::failure, 3);
    const GlobalCacheStats stats = cache_stats();
    ASSERT_TRUE(stats.tiers.contains("test tier"));
    expect_tier(stats.tiers.at("test tier"), 2, 0, 0, 3, "test tier");
    EXPECT_EQ(hits, 2u);
    reset_cache_stats();
    expect_tier(cache_stats().tier("test tier"), 0, 0, 0, 0, "test tier after a reset");
    expect_tier(cache_stats().tier("no such tier"), 0, 0, 0, 0, "a tier that never counted");
}

// Tiers that first count at the same moment on many threads, while another thread reads
// cache_stats(): each joins the table once, and every count is there.
constinit detail::CacheTier racing_tiers[] = {
    detail::CacheTier{"racing 0"}, detail::CacheTier{"racing 1"}, detail::CacheTier{"racing 2"},
    detail::CacheTier{"racing 3"}, detail::CacheTier{"racing 4"}, detail::CacheTier{"racing 5"},
    detail::CacheTier{"racing 6"}, detail::CacheTier{"racing 7"}};

TEST(CacheActivity, TiersJoiningFromManyThreadsAtOnceAreEachListedOnce) {
    std::atomic<bool> go{false}, done{false};
    std::vector<std::thread> threads;
    for (auto& tier : racing_tiers) {
        for (int t = 0; t < 2; ++t) {
            threads.emplace_back([&] {
                while (!go) std::this_thread::yield();
                for (int i = 0; i < 500; ++i) tier.count(detail::TierEvent::store);
            });
        }
    }
    std::thread reader([&] {
        while (!done) (void)cache_stats();
    });
    go = true;
    for (auto& thread : threads) thread.join();
    done = true;
    reader.join();
    const GlobalCacheStats stats = cache_stats();
    std::size_t listed = 0;
    detail::CacheTier::for_each([&](const detail::CacheTier& tier) {
        listed += tier.name().starts_with("racing ") ? 1 : 0;
    });
    EXPECT_EQ(listed, std::size(racing_tiers));
    for (const auto& tier : racing_tiers)
        EXPECT_EQ(stats.tier(tier.name()).stores, 1000u) << tier.name();
}

TEST(CacheActivity, TheDeprecatedFieldsGiveTheNamedTiers) {
    reset_cache_stats();
    MemoryProgramCache cache;
    cache.put(key_of(9), code_of(9));
    EXPECT_TRUE(cache.get(key_of(9)));
    const GlobalCacheStats stats = cache_stats();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    expect_tier(stats.memory, 1, 0, 1, 0, "memory, deprecated");
    expect_tier(stats.disk, 0, 0, 0, 0, "disk, deprecated");
    const GlobalCacheStats copy = stats;
    expect_tier(copy.memory, 1, 0, 1, 0, "memory of a copy, deprecated");
#pragma GCC diagnostic pop
    expect_tier(stats.tier("memory"), 1, 0, 1, 0, "memory");
}

}  // namespace
