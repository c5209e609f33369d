// The fixture of the CLI's cache tests (tests/cpu/tools/cli_cache_test.cpp, and the remote tier's
// in tests/cpu/remote/remote_cli_test.cpp): a temporary folder with a kernel source, the CLI run
// with its cache there, and a compile of one instantiation.
#pragma once

#include "test_support.hpp"

#include <map>
#include <string>
#include <vector>

namespace cudacore::test {

inline const char* const cli_kernel_source =
    "template <typename T> __global__ void scale(T* d, T f, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) d[i] *= f;\n"
    "}\n";

struct CliCache : ::testing::Test {
    TempDir dir;
    std::map<std::string, std::string> env{{"CUDACORE_CACHE_DIR", (dir.path() / "cache").string()},
                                           {"CUDACORE_DISABLE_CACHE", ""}};
    std::string source = (dir.path() / "k.cu").string();
    void SetUp() override { write_file(source, cli_kernel_source); }
    ProcessResult cli(std::vector<std::string> args) {
        args.insert(args.begin(), cli_path().string());
        return run_process(args, env);
    }
    ProcessResult compile(const std::string& output, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"compile", source, "-o", output, "--arch", "sm_90",
                                      "--name-expr", "scale<float>"};
        args.insert(args.end(), extra.begin(), extra.end());
        return cli(args);
    }
};

}  // namespace cudacore::test
