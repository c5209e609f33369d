// with_generated_headers (jitify's header_callback): headers made on demand for includes no folder
// has, the answers keyed by their bytes in the program cache, the callback's errors named, and
// calls from many threads. No GPU: explicit arch.
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/generated_headers.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/program.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;
using namespace cudacore::test;

// config.h (quoted, from the source) includes <gen/ops.cuh>, which includes "detail.cuh" (asked for
// by that name: no file lies beside gen/ops.cuh).
const char* const kSource = "#include \"config.h\"\n"
                            "extern \"C\" __global__ void k(int* out) { *out = TILE * twice(3); }\n";

ProgramOptions options(const std::string& name) {
    ProgramOptions o;
    o.name = name;
    o.arch = "sm_90";
    return o;
}

// A callback over `headers` that counts the calls per name (thread-safe).
struct Generator {
    std::map<std::string, std::string> headers;
    std::mutex mutex;
    std::map<std::string, int> asked;
    std::optional<std::string> operator()(const std::string& name) {
        std::lock_guard lock(mutex);
        ++asked[name];
        const auto found = headers.find(name);
        if (found == headers.end()) return std::nullopt;
        return found->second;
    }
    HeaderCallback callback() {
        return [this](const std::string& name) { return (*this)(name); };
    }
};

std::map<std::string, std::string> headers_with_tile(int tile) {
    return {{"config.h", "#pragma once\n#define TILE " + std::to_string(tile) + "\n#include <gen/ops.cuh>\n"},
            {"gen/ops.cuh", "#pragma once\n#include \"detail.cuh\"\n"},
            {"detail.cuh", "#pragma once\n__device__ int twice(int x) { return 2 * x; }\n"}};
}

class GeneratedHeaders : public ::testing::Test {
protected:
    TempDir cache_folder;
    ScopedEnv cache_dir{"CUDACORE_CACHE_DIR", cache_folder.path().string()};
};

TEST_F(GeneratedHeaders, AsksForEachMissingHeaderOnceAndCompiles) {
    Generator generator{headers_with_tile(32)};
    const Program program = with_generated_headers(Program(kSource, SourceType::cxx, options("gen.cu")),
                                                   generator.callback());
    EXPECT_EQ(generator.asked, (std::map<std::string, int>{{"config.h", 1}, {"gen/ops.cuh", 1}, {"detail.cuh", 1}}));
    ASSERT_EQ(program.options().include_path.size(), 1u);
    Program compiled = program;
    const std::string ptx(compiled.compile(CodeType::ptx).code());
    EXPECT_NE(ptx.find("192"), std::string::npos) << ptx;  // TILE * twice(3), folded
}

TEST_F(GeneratedHeaders, NothingMissingGivesTheProgramAsItWas) {
    Generator generator;
    const Program plain("extern \"C\" __global__ void k() {}", SourceType::cxx, options("plain.cu"));
    const Program program = with_generated_headers(plain, generator.callback());
    EXPECT_TRUE(generator.asked.empty());
    EXPECT_EQ(program.options(), plain.options());
}

TEST_F(GeneratedHeaders, NoAnswerLeavesTheCompileToNameTheHeader) {
    Generator generator{{{"config.h", "#include <gen/ops.cuh>\n"}}};
    Program program = with_generated_headers(Program(kSource, SourceType::cxx, options("partial.cu")),
                                             generator.callback());
    EXPECT_EQ(generator.asked["gen/ops.cuh"], 1);
    expect_invalid<CompileError>([&] { program.compile(CodeType::ptx); }, {"gen/ops.cuh"});
}

TEST_F(GeneratedHeaders, ACallbackThatThrowsIsNamedWithTheHeader) {
    const Program program(kSource, SourceType::cxx, options("throwing.cu"));
    expect_invalid<Error>([&] {
        with_generated_headers(program, [](const std::string&) -> std::optional<std::string> {
            throw std::runtime_error("generator offline");
        });
    }, {"header callback", "\"config.h\"", "throwing.cu", "generator offline"});
    expect_invalid<Error>([&] {
        with_generated_headers(program, [](const std::string&) -> std::optional<std::string> { throw 7; });
    }, {"\"config.h\"", "unknown type"});
    expect_invalid<InvalidArgumentError>([&] {
        with_generated_headers(Program(".version 8.0\n", SourceType::ptx, options("a.ptx")), Generator().callback());
    }, {"a.ptx", "C++"});
}

// An answer must be a file of the answers' folder: a name that climbs out of it is refused.
TEST_F(GeneratedHeaders, AnAnswerForANameOutsideTheFolderIsRefused) {
    const Program program("#include \"../up.h\"\n__global__ void k() {}\n", SourceType::cxx, options("up.cu"));
    expect_invalid<CacheError>([&] {
        with_generated_headers(program, [](const std::string&) -> std::optional<std::string> { return "\n"; });
    }, {"../up.h"});
}

// The answers are bytes the compile read: the same answers hit, other answers are another key,
// and a hit's code is the code of those answers.
TEST_F(GeneratedHeaders, TheCacheKeysTheAnswersByTheirBytes) {
    MemoryProgramCache cache;
    Generator first{headers_with_tile(32)};
    Program program = with_generated_headers(Program(kSource, SourceType::cxx, options("keyed.cu")),
                                                   first.callback());
    const ObjectCode code = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_EQ(cache.stats().entries, 1u);

    Generator again{headers_with_tile(32)};
    Program same = with_generated_headers(Program(kSource, SourceType::cxx, options("keyed.cu")),
                                                again.callback());
    EXPECT_EQ(cache_key(same, CodeType::ptx), cache_key(program, CodeType::ptx));
    const auto hit = find_cached(same, CodeType::ptx, {}, {.cache = &cache});
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(hit->code(), code.code());

    Generator other{headers_with_tile(64)};
    Program changed = with_generated_headers(Program(kSource, SourceType::cxx, options("keyed.cu")),
                                                   other.callback());
    EXPECT_NE(cache_key(changed, CodeType::ptx), cache_key(program, CodeType::ptx));
    EXPECT_FALSE(find_cached(changed, CodeType::ptx, {}, {.cache = &cache}).has_value());
    const std::string ptx(compile_cached(changed, CodeType::ptx, {}, {.cache = &cache}).code());
    EXPECT_NE(ptx.find("384"), std::string::npos) << ptx;
}

TEST_F(GeneratedHeaders, ManyThreadsShareOneCallback) {
    Generator generator{headers_with_tile(32)};
    const HeaderCallback callback = generator.callback();
    std::atomic<int> compiled{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            Program program = with_generated_headers(
                Program(kSource, SourceType::cxx, options("thread" + std::to_string(i) + ".cu")), callback);
            if (program.compile(CodeType::ptx).code().find("192") != std::string_view::npos) ++compiled;
        });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(compiled.load(), 4);
    EXPECT_EQ(generator.asked["config.h"], 4);  // once per call
}

}  // namespace
