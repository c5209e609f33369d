// Cache keys, the in-memory cache, and compiling through a cache (single flight, hits).
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tiered_program_cache.hpp"
#include "code/object_code_state.hpp"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace {

using namespace cudacore;
using namespace std::chrono_literals;

const char* const small_kernel = R"(
extern "C" __global__ void scale(float* data, float factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
)";

ProgramOptions sm90() {
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = "scale.cu";
    return options;
}

CacheKey key_of(int n) { return CacheKey::of_bytes("key " + std::to_string(n)); }

ObjectCode code_of_size(std::size_t size, char fill = 'x') {
    return ObjectCode::from_cubin(std::string(size, fill));
}

TEST(CacheKey, HexRoundTripsAndRejectsGarbage) {
    const CacheKey key = key_of(1);
    EXPECT_EQ(key.hex().size(), 64u);
    EXPECT_EQ(CacheKey::from_hex(key.hex()), key);
    EXPECT_THROW(CacheKey::from_hex("abc"), InvalidArgumentError);
    EXPECT_THROW(CacheKey::from_hex(std::string(64, 'g')), InvalidArgumentError);
    EXPECT_NE(key_of(1), key_of(2));
}

TEST(CacheKey, ChangesWithEveryInputThatChangesTheOutput) {
    Program base(small_kernel, SourceType::cxx, sm90());
    const CacheKey reference = cache_key(base, CodeType::cubin);
    EXPECT_EQ(cache_key(Program(small_kernel, SourceType::cxx, sm90()), CodeType::cubin), reference);

    std::set<CacheKey> keys{reference};
    auto add = [&](const CacheKey& key, const char* what) {
        EXPECT_TRUE(keys.insert(key).second) << what << " did not change the key";
    };
    add(cache_key(Program(std::string(small_kernel) + " ", SourceType::cxx, sm90()), CodeType::cubin),
        "source");
    add(cache_key(base, CodeType::ptx), "target");
    add(cache_key(base, CodeType::cubin, {"scale"}), "name expressions");
    auto options = sm90();
    options.arch = "sm_80";
    add(cache_key(Program(small_kernel, SourceType::cxx, options), CodeType::cubin), "arch");
    options = sm90();
    options.use_fast_math = true;
    add(cache_key(Program(small_kernel, SourceType::cxx, options), CodeType::cubin), "an option");
    options = sm90();
    options.define_macro.push_back({"N", "4"});
    add(cache_key(Program(small_kernel, SourceType::cxx, options), CodeType::cubin), "a macro");
    options = sm90();
    options.name = "other.cu";
    add(cache_key(Program(small_kernel, SourceType::cxx, options), CodeType::cubin), "the name");
}

TEST(MemoryProgramCache, HitReturnsTheStoredCode) {
    MemoryProgramCache cache;
    const ObjectCode code = ObjectCode::from_cubin("bytes", "n", {{"a", "b"}});
    EXPECT_FALSE(cache.get(key_of(1)));
    cache.put(key_of(1), code);
    auto hit = cache.get(key_of(1));
    ASSERT_TRUE(hit);
    EXPECT_EQ(*hit, code);
    EXPECT_EQ(hit->code(), code.code());
    const CacheStats stats = cache.stats();
    EXPECT_EQ(stats.hits, 1u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.entries, 1u);
    EXPECT_EQ(stats.bytes, MemoryProgramCache::entry_size(code));
}

TEST(MemoryProgramCache, EvictsLeastRecentlyUsedAndStaysUnderItsBound) {
    MemoryProgramCache cache(300);
    for (int i = 0; i < 3; ++i) cache.put(key_of(i), code_of_size(100));
    ASSERT_TRUE(cache.get(key_of(0)));  // 0 is now the most recent; 1 is the oldest
    cache.put(key_of(3), code_of_size(100));
    EXPECT_TRUE(cache.get(key_of(0)));
    EXPECT_FALSE(cache.get(key_of(1)));
    EXPECT_TRUE(cache.get(key_of(2)));
    EXPECT_TRUE(cache.get(key_of(3)));
    for (int i = 4; i < 50; ++i) {
        cache.put(key_of(i), code_of_size(1 + i * 7 % 150));
        EXPECT_LE(cache.stats().bytes, 300u);
    }
    EXPECT_GT(cache.stats().evictions, 0u);
    cache.put(key_of(99), code_of_size(301));  // larger than the whole cache: not kept
    EXPECT_FALSE(cache.get(key_of(99)));
    cache.clear();
    EXPECT_EQ(cache.stats().entries, 0u);
    EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(MemoryProgramCache, ReplacingAKeyKeepsTheByteCountRight) {
    MemoryProgramCache cache(1000);
    cache.put(key_of(1), code_of_size(100));
    cache.put(key_of(1), code_of_size(50));
    EXPECT_EQ(cache.stats().entries, 1u);
    EXPECT_EQ(cache.stats().bytes, 50u);
}

TEST(MemoryProgramCache, EntryBoundEvictsLeastRecentlyUsed) {
    MemoryProgramCache cache(1 << 20, 3);
    EXPECT_EQ(cache.stats().max_entries, 3u);
    for (int i = 0; i < 3; ++i) cache.put(key_of(i), code_of_size(10));
    ASSERT_TRUE(cache.get(key_of(0)));  // 1 is now the oldest
    cache.put(key_of(3), code_of_size(10));
    EXPECT_EQ(cache.stats().entries, 3u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_FALSE(cache.get(key_of(1)));
    for (int i : {0, 2, 3}) EXPECT_TRUE(cache.get(key_of(i))) << i;
    cache.put(key_of(3), code_of_size(20));  // replacing a key evicts nothing
    EXPECT_EQ(cache.stats().entries, 3u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_EQ(MemoryProgramCache().stats().max_entries, 0u);  // no count bound by default
}

TEST(MemoryProgramCache, ResizeEvictsAtOnceAndBoundsLaterPuts) {
    MemoryProgramCache cache(1000);
    for (int i = 0; i < 5; ++i) cache.put(key_of(i), code_of_size(100));
    cache.resize(250);
    CacheStats stats = cache.stats();
    EXPECT_EQ(stats.max_bytes, 250u);
    EXPECT_EQ(stats.entries, 2u);
    EXPECT_EQ(stats.bytes, 200u);
    EXPECT_EQ(stats.evictions, 3u);
    EXPECT_EQ(*cache.entry_keys(), (std::vector<CacheKey>{key_of(4), key_of(3)}));  // the most recent
    cache.resize(1000, 1);
    EXPECT_EQ(*cache.entry_keys(), std::vector<CacheKey>{key_of(4)});
    cache.put(key_of(5), code_of_size(100));
    EXPECT_EQ(*cache.entry_keys(), std::vector<CacheKey>{key_of(5)});
    cache.resize(1000, 0);  // no count bound again: puts accumulate up to the bytes
    for (int i = 6; i < 20; ++i) cache.put(key_of(i), code_of_size(100));
    stats = cache.stats();
    EXPECT_EQ(stats.entries, 10u);
    EXPECT_EQ(stats.bytes, 1000u);
    cache.resize(0, 0);
    EXPECT_EQ(cache.stats().entries, 0u);
    cache.put(key_of(30), code_of_size(1));  // larger than a cache of 0 bytes: not kept
    EXPECT_FALSE(cache.get(key_of(30)));
}

TEST(MemoryProgramCache, ResetStatsZeroesTheCountersAndKeepsTheEntries) {
    MemoryProgramCache cache(150, 10);
    cache.put(key_of(1), code_of_size(100));
    cache.put(key_of(2), code_of_size(100));  // evicts 1
    EXPECT_FALSE(cache.get(key_of(1)));
    EXPECT_TRUE(cache.get(key_of(2)));
    cache.reset_stats();
    CacheStats stats = cache.stats();
    EXPECT_EQ(stats.hits, 0u);
    EXPECT_EQ(stats.misses, 0u);
    EXPECT_EQ(stats.insertions, 0u);
    EXPECT_EQ(stats.evictions, 0u);
    EXPECT_EQ(stats.entries, 1u);
    EXPECT_EQ(stats.bytes, 100u);
    EXPECT_EQ(stats.max_bytes, 150u);
    EXPECT_EQ(stats.max_entries, 10u);
    EXPECT_TRUE(cache.get(key_of(2)));  // counting goes on from 0
    EXPECT_EQ(cache.stats().hits, 1u);
}

// Gets, puts, resizes and resets from many threads at once (run under TSan by the CI): the
// cache ends within the last bounds, and what it counts matches what it holds.
TEST(MemoryProgramCache, ResizeAndResetWhileOtherThreadsUseIt) {
    MemoryProgramCache cache(2000, 20);
    std::atomic<bool> stop{false};
    std::vector<std::thread> users;
    for (int t = 0; t < 6; ++t) {
        users.emplace_back([&, t] {
            for (int i = 0; !stop; ++i) {
                const int n = (i * 7 + t * 13) % 40;
                if (i % 3 == 0) cache.put(key_of(n), code_of_size(1 + (i * 31 + t) % 120));
                else (void)cache.get(key_of(n));
            }
        });
    }
    for (int round = 0; round < 2000; ++round) {
        cache.resize(100 + round % 1900, round % 25);
        if (round % 100 == 0) cache.reset_stats();
    }
    cache.resize(500, 5);
    stop = true;
    for (auto& user : users) user.join();
    const CacheStats stats = cache.stats();
    EXPECT_LE(stats.bytes, 500u);
    EXPECT_LE(stats.entries, 5u);
    const std::vector<CacheKey> keys = *cache.entry_keys();
    EXPECT_EQ(keys.size(), stats.entries);
    std::uint64_t bytes = 0;
    for (const CacheKey& key : keys) bytes += MemoryProgramCache::entry_size(*cache.get(key));
    EXPECT_EQ(bytes, stats.bytes);
}

// Many threads asking for one missing key: the compile function runs once.
void expect_single_flight(ProgramCache& cache) {
    std::atomic<int> compiles{0};
    const ObjectCode result = ObjectCode::from_cubin("compiled once", "single");
    std::vector<std::thread> threads;
    std::vector<std::optional<ObjectCode>> results(16);
    for (std::size_t t = 0; t < results.size(); ++t) {
        threads.emplace_back([&, t] {
            results[t] = get_or_compile(cache, key_of(7), [&] {
                ++compiles;
                std::this_thread::sleep_for(100ms);  // long enough for every thread to ask
                return result;
            });
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(compiles.load(), 1);
    for (const auto& r : results) {
        ASSERT_TRUE(r);
        EXPECT_EQ(*r, result);
    }
    // One lookup missed: the calls that came while it was in flight shared its outcome, and any
    // that came after it found the entry.
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(get_or_compile(cache, key_of(7), [&]() -> ObjectCode { throw std::logic_error("hit expected"); }),
              result);
}

// One way for a cache to reach a compile: CompileOptions::cache. Without one, compile_cached is
// Program::compile and find_cached refuses; the deprecated cache-first forms reach the same
// entries.
TEST(CachedCompile, TheCacheComesThroughCompileOptions) {
    MemoryProgramCache cache;
    Program program(small_kernel, SourceType::cxx, sm90());
    const ObjectCode plain = compile_cached(program, CodeType::ptx);
    EXPECT_EQ(cache.stats().insertions, 0u);
    EXPECT_THROW(find_cached(program, CodeType::ptx), InvalidArgumentError);
    const ObjectCode stored = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_EQ(stored, plain);
    const CacheStats after_store = cache.stats();
    EXPECT_GE(after_store.insertions, 1u);
    ASSERT_TRUE(find_cached(program, CodeType::ptx, {}, {.cache = &cache}).has_value());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_EQ(compile_cached(cache, program, CodeType::ptx), plain);
    EXPECT_EQ(find_cached(cache, program, CodeType::ptx), std::optional<ObjectCode>(plain));
#pragma GCC diagnostic pop
    // The old forms hit what the new one stored.
    EXPECT_EQ(cache.stats().insertions, after_store.insertions);
    EXPECT_GT(cache.stats().hits, after_store.hits);
}

// One call is one lookup: a missing key is one miss in each cache it was looked up in, and a
// present one one hit, so that hits / (hits + misses) is the share of calls that found their code.
// compile_cached looks again in its turn only where a compile of this process may have stored
// the key since its first look.
TEST(CachedCompile, CompileCachedCountsOneLookupPerCall) {
    test::TempDir dir;
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "cache");
    for (ProgramCache* cache : std::initializer_list<ProgramCache*>{memory.get(), disk.get()}) {
        Program program(small_kernel, SourceType::cxx, sm90());
        const ObjectCode first = compile_cached(program, CodeType::cubin, {}, {.cache = cache});
        CacheStats stats = cache->stats();
        EXPECT_EQ(stats.misses, 1u);
        EXPECT_EQ(stats.hits, 0u);
        EXPECT_EQ(compile_cached(program, CodeType::cubin, {}, {.cache = cache}), first);
        Program again(small_kernel, SourceType::cxx, sm90());  // its keys worked out anew
        EXPECT_EQ(compile_cached(again, CodeType::cubin, {}, {.cache = cache}), first);
        stats = cache->stats();
        EXPECT_EQ(stats.misses, 1u);
        EXPECT_EQ(stats.hits, 2u);
    }
    TieredProgramCache tiered({std::make_shared<MemoryProgramCache>(),
                               std::make_shared<DiskProgramCache>(dir.path() / "tiered")});
    Program program(small_kernel, SourceType::cxx, sm90());
    compile_cached(program, CodeType::ptx, {}, {.cache = &tiered});
    compile_cached(program, CodeType::ptx, {}, {.cache = &tiered});
    EXPECT_EQ(tiered.stats().misses, 1u);
    EXPECT_EQ(tiered.stats().hits, 1u);
}

TEST(CachedCompile, GetOrCompileCountsOneLookupPerCall) {
    MemoryProgramCache plain;
    EXPECT_EQ(get_or_compile(plain, key_of(20), [] { return code_of_size(10); }), code_of_size(10));
    CacheStats stats = plain.stats();
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.hits, 0u);
    EXPECT_EQ(stats.insertions, 1u);
    EXPECT_EQ(get_or_compile(plain, key_of(20), [] { return code_of_size(11); }), code_of_size(10));
    stats = plain.stats();
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.hits, 1u);

    test::TempDir dir;
    auto memory = std::make_shared<MemoryProgramCache>();
    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "cache");
    TieredProgramCache tiered({memory, disk});
    for (int round = 0; round < 2; ++round)
        for (int key = 0; key < 3; ++key)
            EXPECT_EQ(get_or_compile(tiered, key_of(30 + key), [&] { return code_of_size(20 + key); }),
                      code_of_size(20 + key));
    EXPECT_EQ(tiered.stats().misses, 3u);
    EXPECT_EQ(tiered.stats().hits, 3u);
    EXPECT_EQ(memory->stats().misses, 3u);
    EXPECT_EQ(memory->stats().hits, 3u);
    EXPECT_EQ(disk->stats().misses, 3u);  // the second round was answered by memory
    EXPECT_EQ(disk->stats().hits, 0u);
}

TEST(CachedCompile, ManyThreadsOneMissingKeyCompileOnceInMemory) {
    MemoryProgramCache cache;
    expect_single_flight(cache);
}

TEST(CachedCompile, ManyThreadsOneMissingKeyCompileOnceOnDisk) {
    test::TempDir dir;
    DiskProgramCache cache(dir.path() / "cache");
    expect_single_flight(cache);
}

TEST(CachedCompile, FailureReachesEveryWaiterAndIsNotCached) {
    MemoryProgramCache cache;
    std::atomic<int> compiles{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&] {
            try {
                get_or_compile(cache, key_of(8), [&]() -> ObjectCode {
                    ++compiles;
                    std::this_thread::sleep_for(100ms);
                    throw CompileError("bad.cu", "error: expected a ';'", {}, "NVRTC");
                });
            } catch (const CompileError&) {
                ++failures;
            }
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(compiles.load(), 1);
    EXPECT_EQ(failures.load(), 8);
    // The failure is not remembered: the next call compiles again.
    const ObjectCode fixed = ObjectCode::from_cubin("fixed");
    EXPECT_EQ(get_or_compile(cache, key_of(8), [&] { return fixed; }), fixed);
}

TEST(CachedCompile, RealProgramHitReturnsIdenticalBytesWithoutCompiling) {
    MemoryProgramCache cache;
    Program first(small_kernel, SourceType::cxx, sm90());
    const ObjectCode compiled = compile_cached(first, CodeType::cubin, {"scale"}, {.cache = &cache});
    // One entry: the code, under the key of what NVRTC was given (it names no path).
    EXPECT_EQ(cache.stats().insertions, 1u);
    EXPECT_EQ(compiled.symbol_map().at("scale"), "scale");

    // A second, equal Program: served from the cache (the very same shared value, so no
    // compile produced it), with identical bytes.
    Program second(small_kernel, SourceType::cxx, sm90());
    const ObjectCode hit = compile_cached(second, CodeType::cubin, {"scale"}, {.cache = &cache});
    EXPECT_EQ(hit, compiled);
    EXPECT_EQ(cudacore::detail::ObjectCodeAccess::state(hit), cudacore::detail::ObjectCodeAccess::state(compiled));
    EXPECT_EQ(cache.stats().hits, 1u);  // the code, under its first key
    EXPECT_EQ(cache.stats().insertions, 1u);

    // Through the disk cache: the hit is a new value with byte-identical code.
    test::TempDir dir;
    DiskProgramCache disk(dir.path() / "cache");
    const ObjectCode stored = compile_cached(first, CodeType::cubin, {"scale"}, {.cache = &disk});
    const ObjectCode from_disk = compile_cached(second, CodeType::cubin, {"scale"}, {.cache = &disk});
    EXPECT_EQ(from_disk, stored);
    EXPECT_EQ(from_disk.code(), compiled.code());
    EXPECT_EQ(disk.stats().hits, 1u);
}

}  // namespace
