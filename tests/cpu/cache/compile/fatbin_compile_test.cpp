// compile_fatbin: one Program for a list of targets in one call, into one fatbin; its target
// checks, its key (the whole target list), and the cache it shares with compile_many.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/memory_program_cache.hpp"

#include <string>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
template <typename T> __global__ void scale(T* p, T factor) { p[threadIdx.x] *= factor; }
)";

Program program(const std::string& source = kSource) {
    ProgramOptions options;
    options.name = "scale.cu";
    return Program(source, SourceType::cxx, options);
}

std::vector<std::string> kinds_and_archs(const ObjectCode& fatbin) {
    std::vector<std::string> out;
    for (const FatbinEntry& entry : inspect_code(fatbin).entries) out.push_back(entry.kind + ":" + entry.arch);
    return out;
}

TEST(FatbinCompile, CubinsForSmTargetsAndPtxForComputeTargets) {
    CompileOptions options;
    FatbinOptions fatbin_options;
    options.workers = 2;
    fatbin_options.compress = false;
    const ObjectCode fatbin =
        compile_fatbin(program(), {"sm_80", "sm_90", "compute_90"}, {"scale<float>"}, options, fatbin_options);
    EXPECT_EQ(fatbin.code_type(), CodeType::fatbin);
    EXPECT_EQ(fatbin.name(), "scale.cu");
    EXPECT_EQ(kinds_and_archs(fatbin), (std::vector<std::string>{"elf:sm_80", "elf:sm_90", "ptx:compute_90"}));
    EXPECT_EQ(fatbin.lowered_name("scale<float>"), "_Z5scaleIfEvPT_S0_");
    EXPECT_EQ(inspect_code(fatbin).kernels, (std::vector<std::string>{"_Z5scaleIfEvPT_S0_"}));
}

TEST(FatbinCompile, SameImagesAsCompilingEachTargetAlone) {
    CompileOptions options;
    FatbinOptions fatbin_options;
    fatbin_options.compress = false;
    const ObjectCode fatbin = compile_fatbin(program(), {"sm_90", "compute_80"}, {}, options, fatbin_options);
    ProgramOptions sm90;
    sm90.name = "scale.cu";
    sm90.arch = "sm_90";
    ProgramOptions compute80 = sm90;
    compute80.arch = "compute_80";
    const ObjectCode alone = FatbinBuilder(fatbin_options)
                                 .add(Program(kSource, SourceType::cxx, sm90).compile(CodeType::cubin), "sm_90")
                                 .add(Program(kSource, SourceType::cxx, compute80).compile(CodeType::ptx), "compute_80")
                                 .build("scale.cu");
    EXPECT_EQ(fatbin.code(), alone.code());
}

TEST(FatbinCompile, LtoTargetGivesLtoIr) {
    CompileOptions options;
    FatbinOptions fatbin_options;
    fatbin_options.compress = false;
    const ObjectCode fatbin = compile_fatbin(program(), {"lto_90", "sm_90"}, {}, options, fatbin_options);
    EXPECT_EQ(kinds_and_archs(fatbin), (std::vector<std::string>{"ltoir:lto_90", "elf:sm_90"}));
}

TEST(FatbinCompile, BadTargetListsAreRefusedBeforeCompiling) {
    const Program p = program("this does not compile");  // reached only past the checks
    const auto refused = [&](const std::vector<std::string>& targets, const std::string& expected) {
        try {
            compile_fatbin(p, targets);
            ADD_FAILURE() << "accepted: " << ::testing::PrintToString(targets);
        } catch (const InvalidArgumentError& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    };
    refused({}, "no targets");
    refused({"sm_90", "sm_80", "sm_90"}, "'sm_90' is named twice");
    refused({"sm_90", "gfx90a"}, "fatbin target 'gfx90a' is not one of sm_XX");
    refused({"sm_9"}, "fatbin target 'sm_9'");
    refused({"compute_90x"}, "fatbin target 'compute_90x'");
    refused({"90"}, "fatbin target '90'");
    EXPECT_THROW(fatbin_cache_key(p, {}), InvalidArgumentError);
    EXPECT_EQ(parse_fatbin_target("sm_90a").arch, "sm_90a");
    EXPECT_EQ(parse_fatbin_target("compute_90").type, CodeType::ptx);
    EXPECT_EQ(parse_fatbin_target("lto_90").arch, "sm_90");
}

TEST(FatbinCompile, CompileErrorNamesTheTarget) {
    const Program p = program("__global__ void k() { undeclared(); }");
    try {
        compile_fatbin(p, {"sm_80", "compute_90"});
        FAIL() << "a failing compile gave a fatbin";
    } catch (const CompileError& e) {
        EXPECT_NE(e.log().find("undeclared"), std::string::npos) << e.log();
        // Both targets fail; the first to fail stops the other, so either may be the one named.
        bool names_arch = false;
        for (const auto& option : e.options())
            names_arch = names_arch || option.find("sm_80") != std::string::npos ||
                         option.find("compute_90") != std::string::npos;
        EXPECT_TRUE(names_arch) << e.what();
    }
}

// Targets compiled one after another in the calling thread (threads, a small program) or in
// child processes: either way the error is the lowest failing target's, and a cancelled call
// compiles nothing.
class FatbinStrategies : public ::testing::TestWithParam<CompileStrategy> {};

TEST_P(FatbinStrategies, TheLowestFailingTargetIsTheOneReported) {
    // sm_80 compiles; sm_90, sm_100 and compute_90 (__CUDA_ARCH__ 900 and up) fail.
    const Program p = program("#if __CUDA_ARCH__ >= 900\n#error arch_too_new\n#endif\n__global__ void k() {}\n");
    CompileOptions options;
    options.strategy = GetParam();
    try {
        compile_fatbin(p, {"sm_80", "sm_90", "sm_100", "compute_90"}, {}, options);
        FAIL() << "a failing target gave a fatbin";
    } catch (const CompileError& e) {
        EXPECT_NE(e.log().find("arch_too_new"), std::string::npos) << e.log();
        bool sm_90 = false, later = false;
        for (const auto& option : e.options()) {
            sm_90 = sm_90 || option.find("sm_90") != std::string::npos;
            later = later || option.find("sm_100") != std::string::npos ||
                    option.find("compute_90") != std::string::npos;
        }
        EXPECT_TRUE(sm_90 && !later) << e.what();
    }
}

TEST_P(FatbinStrategies, ACancelledCallThrowsCompileCancelled) {
    CompileOptions options;
    options.strategy = GetParam();
    options.cancellation.cancel();
    EXPECT_THROW(compile_fatbin(program(), {"sm_80", "sm_90", "compute_90"}, {"scale<float>"}, options),
                 CompileCancelled);
}

INSTANTIATE_TEST_SUITE_P(Strategies, FatbinStrategies,
                         ::testing::Values(CompileStrategy::threads, CompileStrategy::processes),
                         [](const auto& info) {
                             return std::string(info.param == CompileStrategy::threads ? "threads" : "processes");
                         });

TEST(FatbinCompile, KeyCoversTheWholeTargetList) {
    const Program p = program();
    const CacheKey three = fatbin_cache_key(p, {"sm_80", "sm_90", "compute_90"});
    EXPECT_EQ(three, fatbin_cache_key(program(), {"sm_80", "sm_90", "compute_90"}));
    EXPECT_NE(three, fatbin_cache_key(p, {"sm_80", "sm_90"}));
    EXPECT_NE(three, fatbin_cache_key(p, {"sm_80", "sm_90", "compute_80"}));
    EXPECT_NE(three, fatbin_cache_key(p, {"sm_90", "sm_80", "compute_90"}));  // order is in the bytes
    EXPECT_NE(three, fatbin_cache_key(p, {"sm_80", "sm_90", "compute_90"}, {"scale<float>"}));
    FatbinOptions plain;
    plain.compress = false;
    EXPECT_NE(three, fatbin_cache_key(p, {"sm_80", "sm_90", "compute_90"}, {}, plain));
    EXPECT_NE(three, fatbin_cache_key(program("__global__ void other() {}"), {"sm_80", "sm_90", "compute_90"}));
    // Not the key of any one target's compile.
    ProgramOptions sm80 = p.options();
    sm80.arch = "sm_80";
    EXPECT_NE(fatbin_cache_key(p, {"sm_80"}), cache_key(Program(kSource, SourceType::cxx, sm80), CodeType::cubin));
}

TEST(FatbinCompile, EachTargetIsCachedAsCompileManyCachesIt) {
    MemoryProgramCache cache;
    CompileOptions options;
    FatbinOptions fatbin_options;
    options.cache = &cache;
    const ObjectCode first = compile_fatbin(program(), {"sm_80", "compute_90"}, {}, options, fatbin_options);
    const CacheStats after_first = cache.stats();
    EXPECT_EQ(after_first.hits, 0u);
    const ObjectCode second = compile_fatbin(program(), {"sm_80", "compute_90"}, {}, options, fatbin_options);
    EXPECT_GE(after_first.insertions, 2u);  // each target stored
    EXPECT_GT(cache.stats().hits, after_first.hits);
    EXPECT_EQ(cache.stats().insertions, after_first.insertions);  // nothing compiled again
    EXPECT_EQ(second.code(), first.code());
}

}  // namespace
