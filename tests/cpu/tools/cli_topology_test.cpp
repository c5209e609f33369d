// `cudacore devices --topology` without NVML: exit code 1 and an error naming what was searched
// and the variable that points elsewhere; --json reports the same error as a field.
#include "test_support.hpp"

namespace {

using cudacore::test::cli_path;
using cudacore::test::run_process;

const std::map<std::string, std::string> missing_nvml = {
    {"CUDACORE_NVML_PATH", "/nonexistent/libnvidia-ml.so.1"}};

TEST(CliTopology, WithoutNvmlFailsNamingThePathSearched) {
    auto result = run_process({cli_path().string(), "devices", "--topology"}, missing_nvml);
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("NVML"), std::string::npos) << result.err;
}

}  // namespace
