// The program cache and header bundles: the key covers each bundle's digest, in order, so two
// different bundles never share an entry, and the same bundle finds the code it stored.
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/header_bundle.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

namespace {

using namespace cudacore;

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
            const ObjectCode code = compile_cached(cache, program, CodeType::ptx);
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

}  // namespace
