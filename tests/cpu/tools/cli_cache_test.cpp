// The CLI's cache: compile hits, --no-cache, --serialize + inspect, and `cudacore cache`.
#include "test_support.hpp"

#include "cudacore/object_code.hpp"

#include <sys/stat.h>

namespace {

using cudacore::test::cli_path;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::TempDir;

const char* const kernel_source =
    "template <typename T> __global__ void scale(T* d, T f, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) d[i] *= f;\n"
    "}\n";

struct CliCache : ::testing::Test {
    TempDir dir;
    std::map<std::string, std::string> env{{"CUDACORE_CACHE_DIR", (dir.path() / "cache").string()},
                                           {"CUDACORE_DISABLE_CACHE", ""}};
    std::string source = (dir.path() / "k.cu").string();
    void SetUp() override { cudacore::test::write_file(source, kernel_source); }
    cudacore::test::ProcessResult cli(std::vector<std::string> args) {
        args.insert(args.begin(), cli_path().string());
        return run_process(args, env);
    }
    cudacore::test::ProcessResult compile(const std::string& output, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"compile", source, "-o", output, "--arch", "sm_90",
                                      "--name-expr", "scale<float>"};
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    }
};

TEST_F(CliCache, SecondCompileIsACacheHitWithIdenticalOutput) {
    const auto first = compile((dir.path() / "1.cubin").string());
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.err.find("cache hit"), std::string::npos) << first.err;
    const auto second = compile((dir.path() / "2.cubin").string());
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("cache hit"), std::string::npos) << second.err;
    EXPECT_EQ(read_file(dir.path() / "1.cubin"), read_file(dir.path() / "2.cubin"));
    EXPECT_EQ(second.out, first.out);  // the symbol map, from the cache too
    struct stat info {};
    ASSERT_EQ(stat((dir.path() / "cache").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
}

TEST_F(CliCache, NoCacheFlagAndEnvironmentSkipTheCache) {
    ASSERT_EQ(compile((dir.path() / "1.cubin").string(), {"--no-cache"}).exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
    env["CUDACORE_DISABLE_CACHE"] = "1";
    ASSERT_EQ(compile((dir.path() / "2.cubin").string()).exit_code, 0);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "cache"));
}

TEST_F(CliCache, SerializeWritesALoadableObjectCodeThatInspectReads) {
    const auto path = dir.path() / "k.ccobj";
    ASSERT_EQ(compile(path.string(), {"--serialize", "--no-cache"}).exit_code, 0);
    const auto code = cudacore::ObjectCode::load(path);
    EXPECT_EQ(code.code_type(), cudacore::CodeType::cubin);
    EXPECT_EQ(code.name(), "k.cu");
    EXPECT_EQ(code.symbol_map().count("scale<float>"), 1u);
    const auto inspected = cli({"inspect", path.string()});
    ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
    EXPECT_NE(inspected.out.find("serialized ObjectCode"), std::string::npos) << inspected.out;
    EXPECT_NE(inspected.out.find("scale<float> -> _Z5scaleIfEvPT_S0_i"), std::string::npos)
        << inspected.out;
    EXPECT_NE(inspected.out.find("sm_90"), std::string::npos) << inspected.out;

    std::string corrupt = read_file(path);
    corrupt[corrupt.size() / 2] ^= 1;
    cudacore::test::write_file(path, corrupt);
    const auto rejected = cli({"inspect", path.string()});
    EXPECT_NE(rejected.exit_code, 0);
    EXPECT_NE(rejected.err.find("checksum"), std::string::npos) << rejected.err;
}

TEST_F(CliCache, CacheStatsPruneAndClear) {
    ASSERT_EQ(compile((dir.path() / "1.cubin").string()).exit_code, 0);
    auto stats = cli({"cache", "stats"});
    ASSERT_EQ(stats.exit_code, 0) << stats.err;
    // Two entries: the code and the list of headers the compile read (its cache key's half).
    EXPECT_NE(stats.out.find("entries    2"), std::string::npos) << stats.out;
    auto pruned = cli({"cache", "prune", "--max-bytes", "0"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
    EXPECT_NE(pruned.out.find("removed 2 entries"), std::string::npos) << pruned.out;
    ASSERT_EQ(compile((dir.path() / "2.cubin").string()).exit_code, 0);
    auto cleared = cli({"cache", "clear"});
    ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
    EXPECT_NE(cli({"cache", "stats"}).out.find("entries    0"), std::string::npos);
}

TEST_F(CliCache, UnsafeCacheDirectoryIsReportedAndCompileStillWorks) {
    std::filesystem::create_directory(dir.path() / "cache");
    ASSERT_EQ(chmod((dir.path() / "cache").c_str(), 0777), 0);
    const auto result = compile((dir.path() / "1.cubin").string());
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find("other users"), std::string::npos) << result.err;
    EXPECT_NE(cli({"cache", "stats"}).exit_code, 0);
}

}  // namespace
