// The code compile_cached gives is the code a plain compile gives, byte for byte: on the miss
// that compiles it (the headers it reads are learned by a separate front-end pass, never by a
// flag on the compile that makes code) and on the hit that reads it back. A property over every
// kernel of the suite's sources and of the examples (each raw string literal that defines a
// __global__ function), for PTX and cubin, among them the two kernels of trace_codegen_kernels.hpp
// where NVRTC's time trace was seen to change code generation.
#include "suite_kernels.hpp"
#include "test_support.hpp"

#include "cudacore/cached_compile.hpp"
#include "cudacore/disk_program_cache.hpp"
#include "cudacore/program.hpp"

#include <filesystem>

namespace {

using namespace cudacore;
using cudacore::test::read_file;
using cudacore::test::TempDir;

using Kernel = cudacore::test::SuiteKernel;
using cudacore::test::suite_and_example_kernels;

// Without PCH on both sides: NVRTC orders a PTX's declarations differently when it uses a PCH, and
// a compile for a cache uses one only when it knows the files it was made from (a PCH a plain
// compile made is not trusted: caching.md), so with PCH the two sides could differ in order only.
// HeaderCache.HeadersAreReportedWhereAPrecompiledHeaderIsUsed compares the bytes with a PCH.
ProgramOptions options_for(const std::string& name) {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.pch = false;
    return options;
}

struct Outcome {
    bool compiled = false;  // a plain compile succeeded (some suite kernels need other options)
    std::string mismatch;   // empty when every path gave the same bytes
};

// Plain compile, then compile_cached on a miss and on a hit; the bytes of each against the plain
// compile's.
Outcome compare_paths(const Kernel& kernel, CodeType target, const std::filesystem::path& folder) {
    Outcome outcome;
    std::string plain;
    try {
        Program program(kernel.source, SourceType::cxx, options_for(kernel.origin));
        plain = std::string(program.compile(target).code());
    } catch (const CompileError&) {
        return outcome;  // needs options or headers this property does not give it
    }
    outcome.compiled = true;
    // The disk cache: its hit reads back the bytes the miss stored (the memory cache shares
    // compile_cached's path and keeps the ObjectCode itself).
    DiskProgramCache disk(folder);
    for (const char* path : {"miss", "hit"}) {
        Program program(kernel.source, SourceType::cxx, options_for(kernel.origin));
        const std::string cached(compile_cached(program, target, {}, {.cache = &disk}).code());
        if (cached != plain) {
            outcome.mismatch = kernel.origin + " (" + std::string(to_string(target)) + ", " +
                               path + "): " + std::to_string(cached.size()) +
                               " bytes against " + std::to_string(plain.size()) +
                               " from a plain compile";
            return outcome;
        }
    }
    return outcome;
}

TEST(CachedCodeIdentity, CachePathGivesThePlainCompilesBytesForEveryKernel) {
    std::vector<Kernel> kernels = suite_and_example_kernels();
    ASSERT_GE(kernels.size(), 20u) << "the examples and tests/support were not found (set "
                                      "CUDACORE_SOURCE_DIR to the source tree)";
    // The kernels the time trace was seen to change are among them.
    EXPECT_EQ(std::count_if(kernels.begin(), kernels.end(),
                            [](const Kernel& k) { return k.origin.starts_with("trace_codegen_kernels.hpp"); }),
              2);
    TempDir dir;
    std::size_t compared = 0, index = 0;
    for (const Kernel& kernel : kernels) {
        for (CodeType target : {CodeType::ptx, CodeType::cubin}) {
            const Outcome outcome =
                compare_paths(kernel, target, dir.path() / std::to_string(index++));
            EXPECT_EQ(outcome.mismatch, "");
            compared += outcome.compiled;
        }
    }
    std::printf("compared %zu compiles of %zu kernels: plain, cached miss and hit\n", compared,
                kernels.size());
    // Most kernels compile with plain options; the two regression kernels always do.
    EXPECT_GE(compared, kernels.size());
}

// The headers are learned beside the compile, so a cached compile with includes is still keyed
// by them: a changed header is a miss that gives the new code, equal to a plain compile's. The
// miss compiles without PCH: the process's automatic PCH, made from the old header by a plain
// compile, would still be used by NVRTC and give the old code under the new header's key.
TEST(CachedCodeIdentity, HeaderChangeIsAMissWithThePlainCompilesBytes) {
    TempDir dir;
    const auto inc = dir.path() / "inc";
    std::filesystem::create_directories(inc);
    const std::string source =
        "#include \"value.h\"\nextern \"C\" __global__ void k(int* o) { *o = VALUE; }\n";
    ProgramOptions options = options_for("valued");
    options.include_path = {inc.string()};
    ProgramOptions without_pch = options;
    without_pch.pch = false;
    DiskProgramCache cache(dir.path() / "cache");
    for (const char* value : {"7", "4242421"}) {
        cudacore::test::write_file(inc / "value.h", std::string("#define VALUE ") + value + "\n");
        Program with_pch(source, SourceType::cxx, options);  // makes or uses the process's PCH
        (void)with_pch.compile(CodeType::ptx);
        Program plain(source, SourceType::cxx, without_pch);
        const std::string expected(plain.compile(CodeType::ptx).code());
        Program cached(source, SourceType::cxx, options);
        const std::string got(compile_cached(cached, CodeType::ptx, {}, {.cache = &cache}).code());
        EXPECT_EQ(got, expected) << "VALUE " << value;
        EXPECT_NE(got.find(std::string(", ") + value + ";"), std::string::npos) << got;
        EXPECT_EQ(cached.pch_status().outcome, PchOutcome::not_attempted);
    }
}

}  // namespace
