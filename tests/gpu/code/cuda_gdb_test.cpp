// cuda-gdb in batch mode stops in a kernel compiled at run time with debug information and lists
// its source: the file ProgramOptions::debug_source_dir's folder holds, named by the line table.
// Skips without a GPU or without cuda-gdb.
#include "test_support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

// cuda-gdb from $CUDA_HOME/bin, /usr/local/cuda/bin or the PATH; empty when none.
fs::path find_cuda_gdb() {
    std::vector<fs::path> candidates;
    if (const char* home = std::getenv("CUDA_HOME"); home && *home)
        candidates.push_back(fs::path(home) / "bin" / "cuda-gdb");
    candidates.push_back("/usr/local/cuda/bin/cuda-gdb");
    if (const char* path = std::getenv("PATH")) {
        std::string rest = path;
        for (std::size_t start = 0; start <= rest.size();) {
            const std::size_t end = std::min(rest.find(':', start), rest.size());
            if (end > start) candidates.push_back(fs::path(rest.substr(start, end - start)) / "cuda-gdb");
            start = end + 1;
        }
    }
    for (const fs::path& candidate : candidates) {
        std::error_code error;
        if (fs::is_regular_file(candidate, error) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return {};
}

TEST(CudaGdb, StopsInAJitKernelAndListsItsSource) {
    CUDACORE_REQUIRE_GPU();
    const fs::path gdb = find_cuda_gdb();
    if (gdb.empty()) GTEST_SKIP() << "no cuda-gdb ($CUDA_HOME/bin, /usr/local/cuda/bin, PATH)";
    cudacore::test::TempDir dir;
    const std::string helper = cudacore::test::helper_path("debug_jit_kernel").string();

    // The helper alone: it compiles, launches and checks, and says where the source went.
    const auto plain = cudacore::test::run_process({helper, dir.path().string()});
    ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
    ASSERT_NE(plain.out.find("ok"), std::string::npos) << plain.out;
    const std::size_t at = plain.out.find("source: ");
    ASSERT_NE(at, std::string::npos) << plain.out;
    const std::string source_path =
        plain.out.substr(at + 8, plain.out.find('\n', at) - at - 8);
    ASSERT_EQ(fs::path(source_path).parent_path().parent_path(), dir.path()) << source_path;

    cudacore::test::ProcessLimits limits;
    limits.timeout_seconds = 300;
    const auto result = cudacore::test::run_process(
        {gdb.string(), "-batch", "-ex", "set cuda break_on_launch application", "-ex", "run",
         "-ex", "info line", "-ex", "list", "--args", helper, dir.path().string()},
        {}, limits);
    const std::string output = result.out + result.err;
    std::printf("%s\n", output.c_str());
    if (output.find("cuda-gdb is not supported") != std::string::npos ||
        output.find("Failed to initialize CUDA") != std::string::npos)
        GTEST_SKIP() << "cuda-gdb cannot debug on this machine:\n" << output;
    // Stopped in the JIT kernel, at a line of the written file, and listed that file's lines.
    // (The helper prints the path itself; "info line" says 'Line N of "PATH"'.)
    EXPECT_NE(output.find("of \"" + source_path + "\""), std::string::npos) << output;
    EXPECT_TRUE(output.find("jit_debug_kernel: index line") != std::string::npos ||
                output.find("jit_debug_kernel: store line") != std::string::npos)
        << "the listing shows no line of the JIT kernel's source:\n" << output;
}

}  // namespace
