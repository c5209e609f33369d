// `cudacore demo` without a driver: it still compiles both programs and says what it skipped.
#include "test_support.hpp"

namespace {

using cudacore::test::cli_path;
using cudacore::test::run_process;

TEST(DemoCommand, CompilesWithoutADriverAndSaysWhatItSkipped) {
    auto result = run_process({cli_path().string(), "demo"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-for-demo.so.1"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string& out = result.out;
    EXPECT_NE(out.find("SKIPPED: no CUDA driver"), std::string::npos) << out;
    EXPECT_NE(out.find("saxpy: "), std::string::npos) << out;
    EXPECT_NE(out.find("block_sum<float, 256> -> _Z"), std::string::npos) << out;
    EXPECT_NE(out.find("SKIPPED: loading needs a GPU"), std::string::npos) << out;
    EXPECT_NE(out.find("SKIPPED: launching needs a GPU"), std::string::npos) << out;
}

}  // namespace
