// Cache artefacts: a cache exported to one file and imported into another finds every exported
// program without a compile, byte for byte; damaged, foreign or wrongly signed artefacts are
// refused with their reason and leave the cache untouched; imports are idempotent, also from two
// processes at once; and the CLI's compile --manifest, cache export --keys and cache import.
#include "sample_artefact.hpp"
#include "test_support.hpp"

#include "cudacore/cache_activity.hpp"
#include "cudacore/cache_artefact.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/tiered_program_cache.hpp"

#include "cache/cached_entry.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

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

// A signature vouches for every entry of the artefact: a signed export takes only code compiled
// here and entries its own secret signed before. An entry that came from an unsigned artefact (or
// one signed with another secret) is left out and named, so that exporting cannot launder it into
// an artefact its importers trust as the secret's; an unsigned export takes everything.
TEST(CacheArtefact, ASignedExportVouchesOnlyForCodeCompiledHereOrSignedByItsSecret) {
    TempDir dir;
    const std::string other_secret = "another secret of 32 bytes......";
    MemoryProgramCache mixed;
    std::istringstream unsigned_in(test::sample_artefact_bytes());
    ASSERT_EQ(import_cache_artefact(mixed, unsigned_in, {}).imported, 2u);
    const std::vector<ObjectCode> codes = warm(mixed, dir, 1);  // two entries: a marker, the code
    const std::vector<CacheKey> foreign = {CacheKey::of_bytes("one"), CacheKey::of_bytes("two")};
    for (const std::string& key_secret : {std::string(secret), other_secret}) {
        std::stringstream stream;
        const CacheArtefactExport exported = export_cache_artefact(stream, mixed, {.secret = key_secret});
        EXPECT_EQ(exported.entries, 2u);
        std::vector<CacheKey> left_out = exported.not_vouched;
        std::sort(left_out.begin(), left_out.end());
        std::vector<CacheKey> expected = foreign;
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(left_out, expected);
        MemoryProgramCache importer;
        EXPECT_EQ(import_cache_artefact(importer, stream, {.secret = key_secret}).imported, 2u);
        for (const CacheKey& key : foreign) EXPECT_FALSE(importer.get(key));
        EXPECT_EQ(compiles_to_find(importer, dir, codes), 0u);
    }
    std::stringstream unsigned_out;
    const CacheArtefactExport everything = export_cache_artefact(unsigned_out, mixed, {});
    EXPECT_EQ(everything.entries, 4u);
    EXPECT_TRUE(everything.not_vouched.empty());

    // Entries its secret signed are vouched for again by that secret, by no other.
    MemoryProgramCache vouched;
    std::istringstream signed_in(test::sample_artefact_bytes(secret));
    ASSERT_EQ(import_cache_artefact(vouched, signed_in, {.secret = secret}).imported, 2u);
    std::stringstream same, other;
    EXPECT_EQ(export_cache_artefact(same, vouched, {.secret = secret}).entries, 2u);
    const CacheArtefactExport refused = export_cache_artefact(other, vouched, {.secret = other_secret});
    EXPECT_EQ(refused.entries, 0u);
    EXPECT_EQ(refused.not_vouched.size(), 2u);
}

// Expects `call` to throw SerializationError whose message holds each of `parts`.
template <class Call>
void expect_serialization_error(Call&& call, const std::vector<std::string>& parts) {
    try {
        call();
        ADD_FAILURE() << "no error; expected one holding " << parts.front();
    } catch (const SerializationError& e) {
        for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
}

// The largest memory this process has held, in bytes.
std::uint64_t peak_memory() {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

// A file is read only once its header is checked and only to the size it states: a large file
// that is no artefact, or an artefact padded past its size, is refused without being read (the
// process's peak memory does not grow by the file), and a FIFO is refused without waiting for a
// writer. A stream is read no further than the size its header states, and one byte more.
TEST(CacheArtefact, AFileIsReadOnlyAsFarAsItsCheckedHeaderStates) {
    TempDir dir;
    const std::uint64_t big = std::uint64_t{3} << 30;
    const std::filesystem::path junk = dir.path() / "junk.ccart";
    test::write_file(junk, "not an artefact, and large");
    std::filesystem::resize_file(junk, big);  // sparse: costs no disk
    const std::string artefact = test::sample_artefact_bytes();
    const std::filesystem::path padded = dir.path() / "padded.ccart";
    test::write_file(padded, artefact);
    std::filesystem::resize_file(padded, big);
    const std::uint64_t before = peak_memory();
    MemoryProgramCache cache;
    expect_serialization_error([&] { import_cache_artefact(cache, junk); },
                                                {"magic number does not match", std::to_string(big) + " bytes"});
    expect_serialization_error([&] { import_cache_artefact(cache, padded); },
                                                {"trailing data", "its header states " + std::to_string(artefact.size())});
    EXPECT_LT(peak_memory(), before + (std::uint64_t{256} << 20));
    EXPECT_FALSE(cache.get(CacheKey::of_bytes("one")));

    const std::filesystem::path fifo = dir.path() / "fifo.ccart";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    expect_serialization_error([&] { import_cache_artefact(cache, fifo); }, {"not a regular file"});

    std::istringstream trailing(artefact + "x"), exact(artefact);
    expect_serialization_error([&] { import_cache_artefact(cache, trailing); }, {"trailing data"});
    EXPECT_EQ(import_cache_artefact(cache, exact).imported, 2u);
    // A header that states more compressed bytes than could decompress within max_memory: refused
    // from it, the stream not read on (nor a file read).
    std::string claims = artefact;
    for (int i = 0; i < 8; ++i) claims[32 + i] = static_cast<char>(((std::uint64_t{3} << 30) >> (8 * i)) & 0xff);
    std::istringstream big_claim(claims);
    expect_serialization_error([&] { import_cache_artefact(cache, big_claim, {.max_memory = 1 << 20}); },
                               {"more than entries within the memory limit of 1048576 bytes"});
    EXPECT_EQ(CacheArtefact::stated_size(artefact), artefact.size());
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
    const std::string good = test::sample_artefact_bytes();
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
    const std::string signed_bytes = test::sample_artefact_bytes(secret);
    expect_refused(signed_bytes, {}, {"signed with a secret, and none was given"});
    expect_refused(signed_bytes, {.secret = "another secret of 32 bytes......"},
                   {"signature (HMAC-SHA-256) fails"});
    expect_refused(test::sample_artefact_bytes(), {.secret = secret}, {"not signed, and a secret is required"});
    MemoryProgramCache cache;
    std::istringstream in(signed_bytes);
    EXPECT_EQ(import_cache_artefact(cache, in, {.secret = secret}).imported, 2u);
    EXPECT_THROW(test::sample_artefact_bytes("short"), InvalidArgumentError);
}

TEST(CacheArtefact, RefusesEntriesOfOtherCompilerVersionsNamingThem) {
    CacheArtefactOrigin other = CacheArtefact::current_origin();
    other.nvrtc_version = "11.0";
    const std::string bytes = test::sample_artefact_bytes({}, other);
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
