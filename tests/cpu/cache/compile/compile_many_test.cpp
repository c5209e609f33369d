// compile_many: the same ObjectCodes as compiling one by one (threads and processes), in order,
// through a cache (hits skip compiles), and the first failure with its log. No GPU needed.
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/compile_many.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/memory_program_cache.hpp"

namespace {

using namespace cudacore;

constexpr const char* kTemplate = R"(
template <int N>
__global__ void add_n(int* data) { data[threadIdx.x] += N; }
)";

ProgramOptions options_for(const std::string& name) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.toolkit_include_path = false;
    return options;
}

std::vector<std::vector<std::string>> specializations(int count) {
    std::vector<std::vector<std::string>> lists;
    for (int i = 0; i < count; ++i) lists.push_back({"add_n<" + std::to_string(i + 1) + ">"});
    return lists;
}

void expect_same(const ObjectCode& a, const ObjectCode& b) {
    EXPECT_EQ(a.code_type(), b.code_type());
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(a.symbol_map(), b.symbol_map());
    EXPECT_EQ(a.code(), b.code());
}

class CompileMany : public ::testing::TestWithParam<CompileStrategy> {};

TEST_P(CompileMany, EqualsCompilingOneByOne) {
    const auto lists = specializations(4);
    CompileOptions many;
    many.strategy = GetParam();
    many.workers = 2;
    const auto codes = compile_many(kTemplate, options_for("many"), CodeType::cubin, lists, many);
    ASSERT_EQ(codes.size(), lists.size());
    for (size_t i = 0; i < lists.size(); ++i) {
        SCOPED_TRACE(lists[i][0]);
        Program program(kTemplate, SourceType::cxx, options_for("many"));
        expect_same(codes[i], program.compile(CodeType::cubin, lists[i]));
        EXPECT_EQ(codes[i].symbol_map().count(lists[i][0]), 1u);
    }
}

TEST_P(CompileMany, DifferentProgramsInOrder) {
    std::vector<Program> programs;
    for (int i = 0; i < 3; ++i) {
        programs.emplace_back("extern \"C\" __global__ void kernel_" + std::to_string(i) +
                                  "(int* p) { *p = " + std::to_string(i) + "; }",
                              SourceType::cxx, options_for("program_" + std::to_string(i)));
    }
    CompileOptions many;
    many.strategy = GetParam();
    many.workers = 3;
    const auto codes = compile_many(programs, CodeType::ptx, {}, many);
    ASSERT_EQ(codes.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(codes[i].name(), "program_" + std::to_string(i));
        EXPECT_NE(codes[i].code().find("kernel_" + std::to_string(i)), std::string_view::npos);
    }
}

TEST_P(CompileMany, CacheHitsSkipCompiles) {
    MemoryProgramCache cache;
    CompileOptions many;
    many.strategy = GetParam();
    many.workers = 2;
    many.cache = &cache;
    auto lists = specializations(3);
    lists.push_back(lists[0]);  // the same key twice compiles once
    const auto first = compile_many(kTemplate, options_for("cached"), CodeType::ptx, lists, many);
    EXPECT_GT(cache.stats().insertions, 0u);
    expect_same(first[3], first[0]);

    // With threads, every miss was stored (compile_cached): everything is a hit now, and the
    // programs are not compiled (their PCH status stays that of a fresh Program). With
    // processes, only what compiled in this process was stored; the rest compiles again.
    std::vector<Program> programs;
    for (size_t i = 0; i < lists.size(); ++i)
        programs.emplace_back(kTemplate, SourceType::cxx, options_for("cached"));
    const auto second = compile_many(programs, CodeType::ptx, lists, many);
    for (size_t i = 0; i < lists.size(); ++i) {
        expect_same(second[i], first[i]);
        if (GetParam() == CompileStrategy::threads) {
            EXPECT_EQ(programs[i].pch_status().outcome, PchOutcome::not_attempted) << i;
            EXPECT_TRUE(programs[i].pch_status().reason.empty()) << programs[i].pch_status().reason;
        }
    }
}

// compile_cached keeps, under the program's own key, the record of the headers it read. A
// compile_many on the same cache must look the code up exactly as compile_cached does, never take
// that record for code.
TEST_P(CompileMany, SharesACacheWithCompileCachedAndNeverReturnsItsHeaderRecord) {
    MemoryProgramCache cache;
    const std::vector<std::string> names = {"add_n<1>"};
    Program alone(kTemplate, SourceType::cxx, options_for("shared"));
    const ObjectCode expected = compile_cached(alone, CodeType::ptx, names, {.cache = &cache});
    CompileOptions many;
    many.strategy = GetParam();
    many.cache = &cache;
    std::vector<Program> programs;
    programs.emplace_back(kTemplate, SourceType::cxx, options_for("shared"));
    const auto codes = compile_many(programs, CodeType::ptx, {names}, many);
    ASSERT_EQ(codes.size(), 1u);
    expect_same(codes[0], expected);
    EXPECT_NE(codes[0].code().find(".entry"), std::string_view::npos) << codes[0].code();
}

TEST_P(CompileMany, FirstFailureWithItsLog) {
    std::vector<Program> programs;
    programs.emplace_back("extern \"C\" __global__ void fine(int* p) { *p = 1; }", SourceType::cxx,
                          options_for("fine"));
    programs.emplace_back("extern \"C\" __global__ void broken(int* p) { *p = undeclared_one; }",
                          SourceType::cxx, options_for("broken_one"));
    programs.emplace_back("extern \"C\" __global__ void broken(int* p) { *p = undeclared_two; }",
                          SourceType::cxx, options_for("broken_two"));
    CompileOptions many;
    many.strategy = GetParam();
    many.workers = 2;
    try {
        compile_many(programs, CodeType::ptx, {}, many);
        FAIL() << "broken programs compiled";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "broken_one");
        EXPECT_NE(e.log().find("undeclared_one"), std::string::npos) << e.log();
        EXPECT_FALSE(e.options().empty());
    }
}

// The first program compiles alone (it makes the automatic PCH): when it fails, its error is
// raised and the pool stops, whatever the later programs would have done.
TEST_P(CompileMany, AFailingFirstProgramStopsThePoolWithItsOwnError) {
    std::vector<Program> programs;
    for (const char* name : {"broken_first", "broken_second", "fine", "broken_last"}) {
        const std::string body = std::string(name).starts_with("broken") ? "*p = undeclared_" + std::string(name) : "*p = 1";
        programs.emplace_back("extern \"C\" __global__ void kernel(int* p) { " + body + "; }", SourceType::cxx,
                              options_for(name));
    }
    CompileOptions many;
    many.strategy = GetParam();
    many.workers = 4;
    try {
        compile_many(programs, CodeType::ptx, {}, many);
        FAIL() << "broken programs compiled";
    } catch (const CompileError& e) {
        EXPECT_EQ(e.program_name(), "broken_first");
        EXPECT_NE(e.log().find("undeclared_broken_first"), std::string::npos) << e.log();
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, CompileMany,
                         ::testing::Values(CompileStrategy::threads, CompileStrategy::processes),
                         [](const auto& info) {
                             return info.param == CompileStrategy::threads ? "threads"
                                                                           : "processes";
                         });

TEST(CompileManyArguments, NameListsMustMatchPrograms) {
    std::vector<Program> programs;
    programs.emplace_back(kTemplate, SourceType::cxx, options_for("mismatch"));
    EXPECT_THROW(compile_many(programs, CodeType::ptx, specializations(2)), InvalidArgumentError);
    EXPECT_TRUE(compile_many(kTemplate, options_for("none"), CodeType::ptx, {}).empty());
}

}  // namespace
