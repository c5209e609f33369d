// A program compiled with debug or line information has its source written to a file that its
// line table names (ProgramOptions::debug_source_dir); without that information nothing is
// written. The cache key covers the path deliberately. No GPU needed: every test gives an arch.
#include "test_support.hpp"

#include "cudacore/cache_key.hpp"
#include "cudacore/cached_compile.hpp"
#include "cudacore/memory_program_cache.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <set>

namespace {

using namespace cudacore;
using cudacore::test::read_file;
using cudacore::test::TempDir;

constexpr const char* kKernel = R"(extern "C" __global__ void add_one(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1.0f;
}
)";

ProgramOptions options_in(const std::filesystem::path& folder, const std::string& name = "kernel.cu") {
    ProgramOptions options;
    options.name = name;
    options.arch = "sm_90";
    options.debug_source_dir = folder.string();
    return options;
}

// The file names of the PTX's .file directives.
std::set<std::string> ptx_files(const std::string& ptx) {
    std::set<std::string> files;
    const std::regex directive(R"re(\.file\s+\d+\s+"([^"]+)")re");
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), directive), end; it != end; ++it)
        files.insert((*it)[1].str());
    return files;
}

std::size_t files_under(const std::filesystem::path& folder) {
    std::size_t count = 0;
    if (!std::filesystem::exists(folder)) return 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
        count += entry.is_regular_file();
    return count;
}

TEST(DebugSource, LineInfoPtxNamesTheWrittenFileWhichHoldsTheSource) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path());
    options.lineinfo = true;
    Program program(kKernel, SourceType::cxx, options);
    const std::filesystem::path path = program.debug_source_path();
    ASSERT_FALSE(path.empty());
    EXPECT_TRUE(path.is_absolute()) << path;
    EXPECT_EQ(path.parent_path().parent_path(), dir.path()) << path;
    EXPECT_EQ(path.filename(), "kernel.cu");
    EXPECT_EQ(path.parent_path().filename().string().size(), 32u) << path;  // XXH3-128, hex

    const ObjectCode ptx = program.compile(CodeType::ptx);
    const std::set<std::string> files = ptx_files(std::string(ptx.code()));
    EXPECT_EQ(files.count(path.string()), 1u) << std::string(ptx.code()).substr(0, 2000);
    ASSERT_TRUE(std::filesystem::is_regular_file(path));
    EXPECT_EQ(read_file(path), kKernel);
    EXPECT_EQ(ptx.name(), "kernel.cu");  // the ObjectCode keeps the program's own name
}

TEST(DebugSource, DeviceDebugWritesTheSourceToo) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path());
    options.debug = true;
    Program program(kKernel, SourceType::cxx, options);
    const ObjectCode ptx = program.compile(CodeType::ptx);
    EXPECT_EQ(ptx_files(std::string(ptx.code())).count(program.debug_source_path().string()), 1u);
    EXPECT_EQ(read_file(program.debug_source_path()), kKernel);
    // A cubin with debug information compiles as well, from the same file.
    program.compile(CodeType::cubin);
    EXPECT_EQ(files_under(dir.path()), 1u);
}

TEST(DebugSource, LineInfoAmongExtraFlagsCounts) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path());
    options.extra_flags = {"-lineinfo"};
    Program program(kKernel, SourceType::cxx, options);
    const ObjectCode ptx = program.compile(CodeType::ptx);
    EXPECT_EQ(ptx_files(std::string(ptx.code())).count(program.debug_source_path().string()), 1u);
    EXPECT_EQ(files_under(dir.path()), 1u);
}

TEST(DebugSource, WithoutLineInfoNothingIsWritten) {
    TempDir dir;
    Program program(kKernel, SourceType::cxx, options_in(dir.path() / "sources"));
    EXPECT_TRUE(program.debug_source_path().empty());
    const ObjectCode ptx = program.compile(CodeType::ptx);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "sources"));
    for (const std::string& file : ptx_files(std::string(ptx.code())))
        EXPECT_EQ(file.find(dir.path().string()), std::string::npos) << file;
    // Nor for PTX programs, which NVRTC does not compile.
    ProgramOptions ptx_options = options_in(dir.path() / "sources");
    ptx_options.lineinfo = true;
    EXPECT_TRUE(Program(std::string(ptx.code()), SourceType::ptx, ptx_options)
                    .debug_source_path()
                    .empty());
}

TEST(DebugSource, IdenticalSourcesShareOneFileOthersGetTheirOwn) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path());
    options.lineinfo = true;
    Program first(kKernel, SourceType::cxx, options);
    Program second(kKernel, SourceType::cxx, options);
    const std::string other_source = std::string(kKernel) + "// another\n";
    Program other(other_source, SourceType::cxx, options);
    EXPECT_EQ(first.debug_source_path(), second.debug_source_path());
    EXPECT_NE(first.debug_source_path(), other.debug_source_path());
    first.compile(CodeType::ptx);
    second.compile(CodeType::ptx);
    other.compile(CodeType::ptx);
    EXPECT_EQ(files_under(dir.path()), 2u);
    EXPECT_EQ(read_file(other.debug_source_path()), other_source);
}

TEST(DebugSource, ProgramNameBecomesOneFileName) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path(), "../up/and\nover.cu");
    options.lineinfo = true;
    Program program(kKernel, SourceType::cxx, options);
    EXPECT_EQ(program.debug_source_path().filename(), ".._up_and_over.cu");
    EXPECT_EQ(program.debug_source_path().parent_path().parent_path(), dir.path());
    options.name = "..";
    EXPECT_EQ(Program(kKernel, SourceType::cxx, options).debug_source_path().filename(),
              "program..");
}

TEST(DebugSource, FolderFromTheEnvironmentAndTheDefault) {
    TempDir dir;
    ProgramOptions options;
    options.arch = "sm_90";
    options.lineinfo = true;
    options.pch = false;  // the automatic PCH folder would go to the TMPDIR set below
    ::setenv("CUDACORE_DEBUG_SOURCE_DIR", dir.path().c_str(), 1);
    const std::filesystem::path from_variable =
        Program(kKernel, SourceType::cxx, options).debug_source_path();
    ::unsetenv("CUDACORE_DEBUG_SOURCE_DIR");
    EXPECT_EQ(from_variable.parent_path().parent_path(), dir.path());

    ::setenv("TMPDIR", dir.path().c_str(), 1);
    Program program(kKernel, SourceType::cxx, options);
    const std::filesystem::path by_default = program.debug_source_path();
    program.compile(CodeType::ptx);
    ::unsetenv("TMPDIR");
    const std::filesystem::path folder = by_default.parent_path().parent_path();
    EXPECT_EQ(folder, dir.path() / ("cudacore-jit-sources-" + std::to_string(::geteuid())));
    EXPECT_EQ(std::filesystem::status(folder).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_all);
    EXPECT_EQ(read_file(by_default), kKernel);
}

TEST(DebugSource, UnwritableFolderIsACompilerApiErrorNamingThePath) {
    TempDir dir;
    cudacore::test::write_file(dir.path() / "a-file", "not a folder");
    ProgramOptions options = options_in(dir.path() / "a-file");
    options.lineinfo = true;
    Program program(kKernel, SourceType::cxx, options);
    try {
        program.compile(CodeType::ptx);
        ADD_FAILURE() << "compiled although the source could not be written";
    } catch (const CompilerApiError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("writing the debug source"), std::string::npos) << message;
        EXPECT_NE(message.find((dir.path() / "a-file").string()), std::string::npos) << message;
        EXPECT_NE(message.find("kernel.cu"), std::string::npos) << message;
    }
}

TEST(DebugSource, CacheKeyCoversThePathAndOnlyWithLineInfo) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path() / "one");
    options.lineinfo = true;
    ProgramOptions elsewhere = options;
    elsewhere.debug_source_dir = (dir.path() / "two").string();
    const CacheKey key = cache_key(Program(kKernel, SourceType::cxx, options), CodeType::ptx);
    // Identical programs with the same folder keep one key.
    EXPECT_EQ(key, cache_key(Program(kKernel, SourceType::cxx, options), CodeType::ptx));
    // Another folder means code naming another file: another key.
    EXPECT_NE(key, cache_key(Program(kKernel, SourceType::cxx, elsewhere), CodeType::ptx));
    // Without line information the folder plays no part.
    options.lineinfo.reset();
    elsewhere.lineinfo.reset();
    EXPECT_EQ(cache_key(Program(kKernel, SourceType::cxx, options), CodeType::ptx),
              cache_key(Program(kKernel, SourceType::cxx, elsewhere), CodeType::ptx));
}

TEST(DebugSource, CodeFromTheCacheFindsItsSourceAgain) {
    TempDir dir;
    ProgramOptions options = options_in(dir.path());
    options.lineinfo = true;
    MemoryProgramCache cache;
    Program program(kKernel, SourceType::cxx, options);
    const ObjectCode compiled = compile_cached(program, CodeType::ptx, {}, {.cache = &cache});
    const std::filesystem::path path = program.debug_source_path();
    ASSERT_TRUE(std::filesystem::exists(path));
    std::filesystem::remove_all(dir.path() / path.parent_path().filename());
    // A hit: the code comes from the cache and names the same file, which is written again.
    Program again(kKernel, SourceType::cxx, options);
    const std::uint64_t hits = cache.stats().hits;
    const ObjectCode hit = compile_cached(again, CodeType::ptx, {}, {.cache = &cache});
    EXPECT_GT(cache.stats().hits, hits);  // served from the cache, not compiled
    EXPECT_EQ(hit.code(), compiled.code());
    EXPECT_EQ(read_file(path), kKernel);
}

}  // namespace
