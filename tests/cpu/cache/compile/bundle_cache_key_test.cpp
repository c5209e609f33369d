// The program cache and header bundles: the key covers each bundle's digest, in order, so two
// different bundles never share an entry, and the same bundle finds the code it stored, whether
// the compile read the bundle from its folder (with PCH) or from memory.
#include "temporary_cache_folder.hpp"
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"
#include "cudacore/warnings.hpp"
#include "headers/bundle_folder.hpp"

#include <stdlib.h>

#include <filesystem>

namespace {

using namespace cudacore;

// Header bundles are written out as folders under the cache folder: a temporary one for this
// program, never the user's.
[[maybe_unused]] ::testing::Environment* const cache_folder_environment =
    ::testing::AddGlobalTestEnvironment(new cudacore::test::TemporaryCacheFolderEnvironment);

constexpr const char* kSource = R"(
#include <value.h>
extern "C" __global__ void store(int* out) { *out = VALUE; }
)";

HeaderBundle value_bundle(int value, const std::string& name = "values") {
    return HeaderBundle::from_headers({{"value.h", "#define VALUE " + std::to_string(value) + "\n"}},
                                      name);
}

Program program_with(std::vector<HeaderBundle> bundles) {
    ProgramOptions options;
    options.name = "bundle_key";
    options.arch = "sm_90";
    options.header_bundles = std::move(bundles);
    return Program(kSource, SourceType::cxx, options);
}

TEST(BundleCacheKey, CoversEachBundlesDigestInOrder) {
    const CacheKey none = cache_key(program_with({}), CodeType::ptx);
    const CacheKey one = cache_key(program_with({value_bundle(1)}), CodeType::ptx);
    EXPECT_NE(none, one);
    EXPECT_EQ(one, cache_key(program_with({value_bundle(1)}), CodeType::ptx));
    // The bundle's name is not its content: the same headers share the key.
    EXPECT_EQ(one, cache_key(program_with({value_bundle(1, "renamed")}), CodeType::ptx));
    EXPECT_NE(one, cache_key(program_with({value_bundle(2)}), CodeType::ptx));
    const HeaderBundle extra = HeaderBundle::from_headers({{"x.h", ""}}, "extra");
    const CacheKey ab = cache_key(program_with({value_bundle(1), extra}), CodeType::ptx);
    const CacheKey ba = cache_key(program_with({extra, value_bundle(1)}), CodeType::ptx);
    EXPECT_NE(ab, one);
    EXPECT_NE(ab, ba);  // the first bundle holding a name wins: order decides the code
}

TEST(BundleCacheKey, CompileCachedKeepsBundlesApart) {
    MemoryProgramCache cache;
    CacheStats after_first;
    for (int round = 0; round < 2; ++round) {
        for (int value : {7770001, 7770002}) {
            Program program = program_with({value_bundle(value)});
            const ObjectCode code = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
            EXPECT_NE(std::string(code.code()).find(std::to_string(value)), std::string::npos)
                << "round " << round << ", value " << value;
        }
        if (round == 0) after_first = cache.stats();
    }
    // The first round stored both codes; the second found them and stored nothing.
    EXPECT_GE(after_first.insertions, 2u);
    EXPECT_EQ(cache.stats().insertions, after_first.insertions);
    EXPECT_GT(cache.stats().hits, after_first.hits);
}

// The key names the bundle by its digest, not by the folder it was read from: a compile from
// the folder (any cache folder) and one from memory share it, and share cached code.
TEST(BundleCacheKey, FolderOrMemoryGiveTheSameKey) {
    const test::TempDir temp;
    const char* previous = std::getenv("CUDACORE_CACHE_DIR");
    const std::string restore = previous ? previous : "";
    const HeaderBundle bundle = value_bundle(4242001);
    auto compile_with_cache_folder = [&](const std::filesystem::path& folder, PchOutcome& outcome) {
        ::setenv("CUDACORE_CACHE_DIR", folder.c_str(), 1);
        Program program = program_with({bundle});
        const CacheKey key = cache_key(program, CodeType::ptx);
        const std::string ptx(program.compile(CodeType::ptx).code());
        EXPECT_NE(ptx.find("4242001"), std::string::npos) << ptx;
        outcome = program.pch_status().outcome;
        return key;
    };
    PchOutcome first = PchOutcome::failed, second = PchOutcome::failed, memory = PchOutcome::failed;
    const CacheKey from_a = compile_with_cache_folder(temp.path() / "a", first);
    const CacheKey from_b = compile_with_cache_folder(temp.path() / "b", second);
    test::write_file(temp.path() / "file", "not a folder\n");
    const CacheKey from_memory = compile_with_cache_folder(temp.path() / "file", memory);
    EXPECT_TRUE(std::filesystem::exists(temp.path() / "a" / "header-bundles" / detail::bundle_folder_name(bundle)));
    EXPECT_TRUE(std::filesystem::exists(temp.path() / "b" / "header-bundles" / detail::bundle_folder_name(bundle)));
    EXPECT_NE(first, PchOutcome::not_attempted);  // read from the folder, with PCH
    EXPECT_NE(second, PchOutcome::not_attempted);
    EXPECT_EQ(memory, PchOutcome::not_attempted);  // no folder: from memory
    EXPECT_EQ(from_a, from_b);
    EXPECT_EQ(from_a, from_memory);

    // Stored from the folder, found from memory: the same entry, the same bytes.
    MemoryProgramCache cache;
    ::setenv("CUDACORE_CACHE_DIR", (temp.path() / "a").c_str(), 1);
    Program stored = program_with({bundle});
    const ObjectCode made = compile_cached(stored, CodeType::ptx, {}, {.cache = &cache});
    const CacheStats after_store = cache.stats();
    ::setenv("CUDACORE_CACHE_DIR", (temp.path() / "file").c_str(), 1);
    Program found = program_with({bundle});
    const ObjectCode hit = compile_cached(found, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_GT(cache.stats().hits, after_store.hits);
    EXPECT_EQ(cache.stats().insertions, after_store.insertions);  // found, not compiled again
    EXPECT_EQ(hit.code(), made.code());
    if (restore.empty()) ::unsetenv("CUDACORE_CACHE_DIR");
    else ::setenv("CUDACORE_CACHE_DIR", restore.c_str(), 1);
}

// A bundled header names itself as the bundle does, whether NVRTC read it from its folder (a path
// that changes with the process: /proc/self/fd/N) or from memory: the folder's files open with a
// #line. So a plain compile (from the folder, with PCH), one from memory and a cached one (from
// memory) give the same code where a bundled header expands __FILE__ and __LINE__, and NVRTC still
// finds a quoted include beside the header in its folder.
TEST(BundleCacheKey, ABundledHeaderNamesItselfAlikeFromItsFolderOrFromMemory) {
    const test::TempDir temp;
    const char* previous = std::getenv("CUDACORE_CACHE_DIR");
    const std::string restore = previous ? previous : "";
    const HeaderBundle bundle = HeaderBundle::from_headers(
        {{"sub/where.h", "#include \"inner.h\"\n__device__ const char* where() { return __FILE__; }\n"
                         "__device__ int line_here() { return __LINE__ * 1000 + INNER; }\n"},
         {"sub/inner.h", "#define INNER 7\n"}},
        "where");
    ProgramOptions options;
    options.name = "where.cu";
    options.arch = "sm_90";
    options.header_bundles = {bundle};
    const std::string source = "#include <sub/where.h>\n"
                               "extern \"C\" __global__ void k(const char** p, int* l) { *p = where(); *l = line_here(); }\n";
    ::setenv("CUDACORE_CACHE_DIR", (temp.path() / "cache").c_str(), 1);
    Program from_folder(source, SourceType::cxx, options);
    const std::string plain(from_folder.compile(CodeType::ptx).code());
    EXPECT_NE(from_folder.pch_status().outcome, PchOutcome::not_attempted) << "read from the folder";
    MemoryProgramCache cache;
    Program cached(source, SourceType::cxx, options);
    EXPECT_EQ(std::string(compile_cached(cached, CodeType::ptx, {}, {.cache = &cache}).code()), plain);
    test::write_file(temp.path() / "file", "not a folder\n");
    ::setenv("CUDACORE_CACHE_DIR", (temp.path() / "file").c_str(), 1);
    Program from_memory(source, SourceType::cxx, options);
    EXPECT_EQ(std::string(from_memory.compile(CodeType::ptx).code()), plain);
    EXPECT_EQ(from_memory.pch_status().outcome, PchOutcome::not_attempted);
    // The line and the quoted include: __LINE__ 3 of where.h, INNER from inner.h beside it.
    EXPECT_NE(plain.find("3007"), std::string::npos) << plain;
    if (restore.empty()) ::unsetenv("CUDACORE_CACHE_DIR");
    else ::setenv("CUDACORE_CACHE_DIR", restore.c_str(), 1);
}

// A compile that reads the bundles from their folders looks for a quoted include beside a project
// header before them, where memory gives the bundle's copy first: a file of a bundled name beside
// the header that includes it is not cached, and the code returned is the plain compile's.
TEST(BundleCacheKey, AFileBesideAProjectHeaderThatABundleNamesIsNotCached) {
    const test::TempDir temp;
    std::filesystem::create_directories(temp.path() / "inc");
    test::write_file(temp.path() / "inc" / "a.h", "#include \"value.h\"\n");
    test::write_file(temp.path() / "inc" / "value.h", "#define VALUE 2\n");
    test::ScopedWorkingDirectory working(temp.path());
    ProgramOptions options;
    options.name = "k.cu";
    options.arch = "sm_90";
    options.header_bundles = {value_bundle(4242003)};
    const std::string source =
        "#include \"inc/a.h\"\nextern \"C\" __global__ void store(int* out) { *out = VALUE; }\n";
    Program plain(source, SourceType::cxx, options);
    const std::string expected(plain.compile(CodeType::ptx).code());
    ASSERT_EQ(expected.find("4242003"), std::string::npos) << "the plain compile reads inc/value.h";
    MemoryProgramCache cache;
    test::WarningLog warnings;
    for (int run = 0; run < 2; ++run) {
        Program program(source, SourceType::cxx, options);
        EXPECT_EQ(std::string(compile_cached(program, CodeType::ptx, {}, {.cache = &cache}).code()), expected)
            << "run " << run;
    }
    EXPECT_EQ(cache.stats().insertions, 0u);
    ASSERT_FALSE(warnings.seen.empty());
    EXPECT_EQ(warnings.seen[0].kind, WarningKind::not_cached);
    EXPECT_NE(warnings.seen[0].message.find("before the header bundles' copy"), std::string::npos)
        << warnings.seen[0].message;
}

}  // namespace
