// Cache artefacts: a cache exported to one file and imported into another finds every exported
// program without a compile, byte for byte; damaged, foreign or wrongly signed artefacts are
// refused with their reason and leave the cache untouched; imports are idempotent, also from two
// processes at once; and the CLI's compile --manifest, cache export --keys and cache import.
#include "redis_server.hpp"
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/remote_program_cache.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include "cache/cached_entry.hpp"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using cudacore::test::TempDir;

constexpr const char* secret = "0123456789abcdef0123456789abcdef";

// A C++ program of the test's folder that reads a header there whose path reaches the code (so its
// entry is two-level: a marker under its first key, the code under the key that names the
// folder) and a template instantiated per `value`.
Program make_program(const TempDir& dir, int value) {
    std::filesystem::create_directories(dir.path() / "include");
    test::write_file(dir.path() / "include" / "offset.h", "#define OFFSET 3\n#define WHERE __FILE__\n");
    ProgramOptions options;
    options.arch = "sm_90";
    options.name = (dir.path() / ("scale" + std::to_string(value) + ".cu")).string();
    options.include_path = {(dir.path() / "include").string()};
    return Program("#include \"offset.h\"\n"
                   "template <int N> __global__ void scale(int* out) { *out = N * " +
                       std::to_string(value) + " + OFFSET + sizeof(WHERE); }\n",
                   SourceType::cxx, options);
}

std::vector<std::string> names() { return {"scale<4>"}; }

// `count` programs compiled into `cache`; their code.
std::vector<ObjectCode> warm(ProgramCache& cache, const TempDir& dir, int count) {
    std::vector<ObjectCode> codes;
    for (int i = 0; i < count; ++i) {
        Program program = make_program(dir, i);
        codes.push_back(compile_cached(program, CodeType::cubin, names(), {.cache = &cache}));
    }
    return codes;
}

// Compiles the `count` programs again through `cache` as a fresh process would (no code keys
// remembered): how many NVRTC compiles that took, and whether each gave `expected`'s bytes.
std::uint64_t compiles_to_find(ProgramCache& cache, const TempDir& dir,
                               const std::vector<ObjectCode>& expected) {
    const std::uint64_t before = cache_stats().compiles;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        Program program = make_program(dir, static_cast<int>(i));
        const ObjectCode code =
            compile_cached(program, CodeType::cubin, names(), {.cache = &cache});
        EXPECT_EQ(code, expected[i]) << "program " << i;
    }
    return cache_stats().compiles - before;
}

TEST(CacheArtefact, RoundTripFindsEveryProgramWithoutCompiling) {
    TempDir dir;
    DiskProgramCache a(dir.path() / "a");
    const std::vector<ObjectCode> codes = warm(a, dir, 4);
    const CacheArtefactExport exported = export_cache_artefact(dir.path() / "warm.ccart", a);
    EXPECT_EQ(exported.entries, 8u);  // a marker and a code entry per program
    EXPECT_EQ(exported.bytes, std::filesystem::file_size(dir.path() / "warm.ccart"));
    EXPECT_TRUE(exported.missing.empty());

    DiskProgramCache b(dir.path() / "b");
    const CacheArtefactImport imported =
        import_cache_artefact(b, std::filesystem::path(dir.path() / "warm.ccart"));
    EXPECT_EQ(imported.imported, 8u);
    EXPECT_EQ(imported.skipped, 0u);
    EXPECT_TRUE(imported.failed.empty());
    EXPECT_EQ(imported.origin.nvrtc_version, CacheArtefact::current_origin().nvrtc_version);
    EXPECT_EQ(b.stats().entries, 8u);
    EXPECT_EQ(compiles_to_find(b, dir, codes), 0u);
}

TEST(CacheArtefact, ExportsTheEntriesOfGivenProgramsThroughStreams) {
    TempDir dir;
    MemoryProgramCache a;
    const std::vector<ObjectCode> codes = warm(a, dir, 3);
    std::vector<CacheKey> keys;
    for (int i : {0, 2}) {
        Program program = make_program(dir, i);
        const std::vector<CacheKey> own =
            cached_entry_keys(program, CodeType::cubin, names(), {.cache = &a});
        EXPECT_EQ(own.size(), 2u);
        keys.insert(keys.end(), own.begin(), own.end());
    }
    const CacheKey absent = CacheKey::of_bytes("never stored");
    keys.push_back(absent);
    std::stringstream stream;
    const CacheArtefactExport exported =
        export_cache_artefact(stream, a, {.keys = keys, .secret = secret});
    EXPECT_EQ(exported.entries, 4u);
    ASSERT_EQ(exported.missing.size(), 1u);
    EXPECT_EQ(exported.missing[0], absent);

    MemoryProgramCache b;
    EXPECT_EQ(import_cache_artefact(b, stream, {.secret = secret}).imported, 4u);
    EXPECT_EQ(compiles_to_find(b, dir, {codes[0]}), 0u);
    Program left_out = make_program(dir, 1);
    EXPECT_FALSE(find_cached(left_out, CodeType::cubin, names(), {.cache = &b}));
    Program included = make_program(dir, 2);
    EXPECT_EQ(find_cached(included, CodeType::cubin, names(), {.cache = &b}), codes[2]);
}

TEST(CacheArtefact, ImportIsIdempotent) {
    TempDir dir;
    MemoryProgramCache a;
    warm(a, dir, 2);
    const std::string bytes = CacheArtefact(
        [&] {
            std::vector<CacheArtefact::Entry> entries;
            const std::vector<CacheKey> keys = *a.entry_keys();
            for (const CacheKey& key : keys) entries.emplace_back(key, *a.get(key));
            return entries;
        }(),
        CacheArtefact::current_origin()).serialize();
    DiskProgramCache b(dir.path() / "b");
    std::istringstream first(bytes), second(bytes);
    EXPECT_EQ(import_cache_artefact(b, first).imported, 4u);
    const CacheArtefactImport again = import_cache_artefact(b, second);
    EXPECT_EQ(again.imported, 0u);
    EXPECT_EQ(again.skipped, 4u);
    EXPECT_EQ(b.stats().entries, 4u);
    std::vector<CacheKey> listed = *b.entry_keys(), expected = *a.entry_keys();
    std::sort(listed.begin(), listed.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(listed, expected);
}

// A small artefact of two made-up entries, as bytes.
std::string sample_bytes(const std::string& secret_text = {},
                         CacheArtefactOrigin origin = CacheArtefact::current_origin()) {
    std::vector<CacheArtefact::Entry> entries;
    entries.emplace_back(CacheKey::of_bytes("one"),
                         ObjectCode::from_bytes(CodeType::ptx, std::string(300, 'p'), "one"));
    entries.emplace_back(CacheKey::of_bytes("two"),
                         ObjectCode::from_bytes(CodeType::ptx, std::string("two"), "two"));
    return CacheArtefact(std::move(entries), std::move(origin)).serialize(secret_text);
}

// Importing `bytes` is refused with a message holding every one of `parts`, and stores nothing.
void expect_refused(const std::string& bytes, const CacheArtefactImportOptions& options,
                    std::initializer_list<const char*> parts) {
    MemoryProgramCache cache;
    std::istringstream in(bytes);
    try {
        import_cache_artefact(cache, in, options);
        ADD_FAILURE() << "imported; expected a refusal holding " << *parts.begin();
    } catch (const SerializationError& e) {
        for (const char* part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
    EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(CacheArtefact, RefusesDamagedArtefactsWithTheReason) {
    const std::string good = sample_bytes();
    expect_refused("not an artefact at all", {}, {"not a cache artefact"});
    expect_refused(good.substr(0, 20), {}, {"truncated", "40-byte header"});
    expect_refused(good.substr(0, good.size() - 1), {}, {"truncated"});
    expect_refused(good + "x", {}, {"trailing data"});
    std::string newer = good;
    newer[8] = 2;  // the format version
    expect_refused(newer, {}, {"format version 2 is newer"});
    std::string damaged = good;
    damaged[45] = static_cast<char>(damaged[45] ^ 0x40);  // inside the compressed payload
    expect_refused(damaged, {}, {"checksum mismatch"});
    std::string flagged = good;
    flagged[12] = 4;  // a flag this version does not know
    expect_refused(flagged, {}, {"unknown flags"});
}

TEST(CacheArtefact, SignedArtefactsNeedTheirSecret) {
    const std::string signed_bytes = sample_bytes(secret);
    expect_refused(signed_bytes, {}, {"signed with a secret, and none was given"});
    expect_refused(signed_bytes, {.secret = "another secret of 32 bytes......"},
                   {"signature (HMAC-SHA-256) fails"});
    expect_refused(sample_bytes(), {.secret = secret}, {"not signed, and a secret is required"});
    MemoryProgramCache cache;
    std::istringstream in(signed_bytes);
    EXPECT_EQ(import_cache_artefact(cache, in, {.secret = secret}).imported, 2u);
    EXPECT_THROW(sample_bytes("short"), InvalidArgumentError);
}

// A library import into a cache that authenticates its entries with a secret (a remote cache with
// one, or a tiered cache over it) refuses an unsigned artefact unless the caller accepts it: the
// cache would otherwise seal what nobody signed, and a fresh machine of the fleet would run it.
TEST(CacheArtefact, ACacheWithASecretRefusesAnUnsignedArtefactUnlessTold) {
    CUDACORE_REQUIRE_REDIS();
    test::RedisServer server;
    const test::ScopedEnv fleet_secret("CUDACORE_TEST_ARTEFACT_SECRET", secret);
    auto remote = std::make_shared<RemoteProgramCache>(
        RemoteCacheOptions::from_url(server.url("", "secret_env=CUDACORE_TEST_ARTEFACT_SECRET")));
    TieredProgramCache tiered({std::make_shared<MemoryProgramCache>(), remote});
    const CacheKey one = CacheKey::of_bytes("one");
    for (ProgramCache* cache : {static_cast<ProgramCache*>(remote.get()), static_cast<ProgramCache*>(&tiered)}) {
        std::istringstream in(sample_bytes());
        try {
            import_cache_artefact(*cache, in);
            ADD_FAILURE() << "an unsigned artefact was imported into a cache with a secret";
        } catch (const SerializationError& e) {
            EXPECT_NE(std::string(e.what()).find("unsigned"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("accept_unsigned"), std::string::npos) << e.what();
        }
    }
    // A fresh machine of the fleet finds nothing.
    RemoteProgramCache fresh(RemoteCacheOptions::from_url(server.url("", "secret_env=CUDACORE_TEST_ARTEFACT_SECRET")));
    EXPECT_FALSE(fresh.get(one));
    // Signed with the fleet's secret: imported, and sealed with it.
    std::istringstream signed_in(sample_bytes(secret));
    EXPECT_EQ(import_cache_artefact(*remote, signed_in, {.secret = secret}).imported, 2u);
    EXPECT_TRUE(fresh.get(one));
    // Said otherwise by the caller: imported.
    remote->clear();
    std::istringstream accepted(sample_bytes());
    EXPECT_EQ(import_cache_artefact(*remote, accepted, {.accept_unsigned = true}).imported, 2u);
    // A cache without a secret vouches for nothing: unsigned artefacts go in as before.
    remote->clear();
    RemoteProgramCache open(RemoteCacheOptions::from_url(server.url()));
    std::istringstream plain(sample_bytes());
    EXPECT_EQ(import_cache_artefact(open, plain).imported, 2u);
}

// What an import brings keeps the trust it came with, in every tier: an unsigned artefact imported
// into a disk or memory cache is served by that cache alone and through a tiered cache whose
// shared tiers hold no secret, but no longer once the fleet turns its secret on (a tiered cache
// over a remote one with a secret); a signed one is served where its secret is, not under another.
// A compile here (a put of the key) stores it as compiled here.
TEST(CacheArtefact, AnImportKeepsTheTrustItCameWithInEveryTier) {
    CUDACORE_REQUIRE_REDIS();
    test::RedisServer server;
    TempDir dir;
    const test::ScopedEnv fleet_secret("CUDACORE_TEST_ARTEFACT_SECRET", secret);
    const test::ScopedEnv other_secret("CUDACORE_TEST_OTHER_SECRET", "another secret of 32 bytes......");
    auto remote = [&](const std::string& query) {
        return std::make_shared<RemoteProgramCache>(RemoteCacheOptions::from_url(server.url("", query)));
    };
    const auto open_remote = remote("");
    const auto fleet_remote = remote("secret_env=CUDACORE_TEST_ARTEFACT_SECRET");
    const auto other_remote = remote("secret_env=CUDACORE_TEST_OTHER_SECRET");
    const CacheKey one = CacheKey::of_bytes("one");

    auto disk = std::make_shared<DiskProgramCache>(dir.path() / "unsigned");
    std::istringstream unsigned_in(sample_bytes());
    EXPECT_EQ(import_cache_artefact(*disk, unsigned_in).imported, 2u);
    std::string trust;
    EXPECT_TRUE(disk->get_with_trust(one, trust));
    EXPECT_EQ(trust, "unsigned cache artefact");
    EXPECT_TRUE(disk->get(one)) << "used alone, a cache serves what was imported into it";
    EXPECT_TRUE(TieredProgramCache({disk, open_remote}).get(one));
    TieredProgramCache fleet({disk, fleet_remote});
    EXPECT_FALSE(fleet.get(one)) << "an unsigned import served as compiled here once the secret is on";
    auto memory = std::make_shared<MemoryProgramCache>();
    std::istringstream into_memory(sample_bytes());
    EXPECT_EQ(import_cache_artefact(*memory, into_memory).imported, 2u);
    EXPECT_TRUE(memory->get(one));
    EXPECT_FALSE(TieredProgramCache({memory, fleet_remote}).get(one));

    auto signed_disk = std::make_shared<DiskProgramCache>(dir.path() / "signed");
    std::istringstream signed_in(sample_bytes(secret));
    EXPECT_EQ(import_cache_artefact(*signed_disk, signed_in, {.secret = secret}).imported, 2u);
    EXPECT_TRUE(signed_disk->get(one));
    EXPECT_TRUE(TieredProgramCache({signed_disk, fleet_remote}).get(one));
    EXPECT_FALSE(TieredProgramCache({signed_disk, other_remote}).get(one));
    // Copied up into a memory tier, it keeps its trust there.
    auto above = std::make_shared<MemoryProgramCache>();
    EXPECT_TRUE(TieredProgramCache({above, signed_disk, fleet_remote}).get(one));
    EXPECT_TRUE(above->get_with_trust(one, trust));
    EXPECT_EQ(trust, fleet_remote->entry_trust());
    EXPECT_FALSE(TieredProgramCache({above, other_remote}).get(one));

    // The machine compiles the key itself: stored as compiled here, served again.
    const ObjectCode code = *disk->get(one);
    fleet.put(one, code);
    EXPECT_TRUE(disk->get_with_trust(one, trust));
    EXPECT_EQ(trust, "");
    EXPECT_EQ(TieredProgramCache({disk, other_remote}).get(one), code);
}

TEST(CacheArtefact, RefusesEntriesOfOtherCompilerVersionsNamingThem) {
    CacheArtefactOrigin other = CacheArtefact::current_origin();
    other.nvrtc_version = "11.0";
    const std::string bytes = sample_bytes({}, other);
    expect_refused(bytes, {}, {"made with NVRTC 11.0", "this process loads NVRTC"});
    MemoryProgramCache cache;
    std::istringstream in(bytes);
    const CacheArtefactImport imported =
        import_cache_artefact(cache, in, {.accept_other_compiler_versions = true});
    EXPECT_EQ(imported.imported, 2u);
    EXPECT_EQ(imported.origin.nvrtc_version, "11.0");
}

TEST(CacheArtefact, ExportingEverythingNeedsACacheThatLists) {
    TempDir dir;
    MemoryProgramCache memory;
    memory.put(CacheKey::of_bytes("k"), ObjectCode::from_bytes(CodeType::ptx, std::string("x"), "k"));
    // A cache that lists nothing (the default of ProgramCache, as a remote cache does).
    class Unlisted final : public ProgramCache {
    public:
        std::optional<ObjectCode> get(const CacheKey&) override { return std::nullopt; }
        void put(const CacheKey&, const ObjectCode&) override {}
        CacheStats stats() const override { return {}; }
        void clear() override {}
    } unlisted;
    std::stringstream stream;
    EXPECT_THROW(export_cache_artefact(stream, unlisted), InvalidArgumentError);
    // A tiered cache lists what its tiers that list hold.
    TieredProgramCache tiered({std::make_shared<MemoryProgramCache>(),
                               std::make_shared<DiskProgramCache>(dir.path() / "d")});
    tiered.put(CacheKey::of_bytes("t"), ObjectCode::from_bytes(CodeType::ptx, std::string("y"), "t"));
    ASSERT_TRUE(tiered.entry_keys());
    EXPECT_EQ(*tiered.entry_keys(), std::vector<CacheKey>{CacheKey::of_bytes("t")});
}

// put_many stores and counts in batches (300 entries: three batches) what put would, replacing an
// entry stored before.
TEST(CacheArtefact, DiskPutManyStoresAndCountsEveryEntry) {
    TempDir dir;
    DiskProgramCache cache(dir.path() / "c");
    std::vector<std::pair<CacheKey, ObjectCode>> entries;
    for (int i = 0; i < 300; ++i) {
        entries.emplace_back(CacheKey::of_bytes("entry " + std::to_string(i)),
                             ObjectCode::from_bytes(CodeType::ptx, std::string(100 + i, 'a' + i % 26),
                                                    "e" + std::to_string(i)));
    }
    cache.put(entries[7].first, ObjectCode::from_bytes(CodeType::ptx, std::string("old"), "old"));
    cache.put_many(entries);
    const CacheStats stats = cache.stats();
    EXPECT_EQ(stats.entries, 300u);
    EXPECT_EQ(stats.insertions, 301u);
    EXPECT_EQ(stats.temporary_files, 0u);
    for (const auto& [key, code] : entries) EXPECT_EQ(cache.get(key), code) << key.hex();
    EXPECT_EQ(cache.entry_keys()->size(), 300u);
    // The counters agree with the files (a recount changes nothing).
    const CacheStats before = cache.stats();
    cache.prune_and_repair(DiskProgramCache::default_max_bytes);
    EXPECT_EQ(cache.stats().entries, before.entries);
    EXPECT_EQ(cache.stats().bytes, before.bytes);
}

TEST(CacheArtefact, TwoProcessesImportIntoOneDiskCacheAtOnce) {
    TempDir dir;
    MemoryProgramCache a;
    const std::vector<ObjectCode> codes = warm(a, dir, 3);
    const std::filesystem::path artefact = dir.path() / "warm.ccart";
    export_cache_artefact(artefact, a);
    const std::string target = (dir.path() / "shared").string();
    const std::vector<std::string> argv = {test::cli_path().string(), "cache", "import",
                                           artefact.string(), "--dir", target};
    const pid_t first = test::spawn(argv), second = test::spawn(argv);
    EXPECT_EQ(test::wait_for(first), 0);
    EXPECT_EQ(test::wait_for(second), 0);
    DiskProgramCache shared(target);
    EXPECT_EQ(shared.stats().entries, 6u);
    EXPECT_EQ(compiles_to_find(shared, dir, codes), 0u);
}

TEST(CacheArtefact, CliExportsAManifestAndImportsIt) {
    TempDir dir;
    // Its code names its path: two entries, the marker and the code.
    test::write_file(dir.path() / "kernel.cu",
                     "extern \"C\" __global__ void k(int* out) { *out = sizeof(__FILE__); }\n");
    const std::string cli = test::cli_path().string();
    const std::string manifest = (dir.path() / "keys.txt").string();
    std::map<std::string, std::string> env{{"CUDACORE_CACHE_DIR", (dir.path() / "a").string()},
                                           {"CUDACORE_REMOTE_CACHE", ""}};
    const std::vector<std::string> compile = {cli, "compile", (dir.path() / "kernel.cu").string(),
                                              "--arch", "sm_90", "-o",
                                              (dir.path() / "k.cubin").string(), "--manifest", manifest};
    auto made = test::run_process(compile, env);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    const std::string artefact = (dir.path() / "k.ccart").string();
    auto exported = test::run_process({cli, "cache", "export", artefact, "--keys", manifest}, env);
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_NE(exported.out.find("exported 2 entries"), std::string::npos) << exported.out;

    env["CUDACORE_CACHE_DIR"] = (dir.path() / "b").string();
    auto imported = test::run_process({cli, "cache", "import", artefact}, env);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_NE(imported.out.find("imported 2 entries"), std::string::npos) << imported.out;
    auto again = test::run_process(compile, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("cache hit"), std::string::npos) << again.err;

    test::write_file(dir.path() / "bad.ccart", "garbage");
    auto refused = test::run_process({cli, "cache", "import", (dir.path() / "bad.ccart").string()}, env);
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("not a cache artefact"), std::string::npos) << refused.err;
}

}  // namespace
