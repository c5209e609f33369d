// cudacore's own tracing of GPU work: the helper of the CPU tracing test, run on a GPU with the
// tests' NVTX tool (tests/helpers/nvtx_recorder.cpp), also instantiates a graph and grows a
// CachingMemoryResource; each is a range of its category in the "cudacore" domain, and the load
// of code for the device's architecture is a range that completes.
#include "nvtx_record.hpp"
#include "test_support.hpp"

#include "cudacore/device.hpp"

#include <string>

namespace {

using namespace cudacore;

TEST(CudacoreTracingOnAGpu, GraphInstantiationPoolGrowthAndLoadAreRanges) {
    CUDACORE_REQUIRE_GPU();
    test::TempDir dir;
    const std::filesystem::path path = dir.path() / "record.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 120;
    const test::ProcessResult result = test::run_process(
        {test::helper_path("tracing_cudacore").string(), (dir.path() / "cache").string()},
        {{"NVTX_INJECTION64_PATH", (test::executable_dir() / "libcudacore_nvtx_recorder.so").string()},
         {"CUDACORE_NVTX_RECORD", path.string()}},
        limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    ASSERT_NE(result.out.find("gpu yes\n"), std::string::npos) << result.out;
    const test::NvtxRecord record = test::read_nvtx_record(path);
    std::string all;
    for (const auto& event : record.events) all += event.kind + " " + event.path + "\n";

    const auto instantiate = record.find("push", "graph instantiate");
    ASSERT_EQ(instantiate.size(), 1u) << all;
    EXPECT_EQ(instantiate[0].path, "graph instantiate");
    EXPECT_EQ(instantiate[0].category, 5u);

    const auto grow = record.find("push", "pool grow");
    ASSERT_EQ(grow.size(), 1u) << all;
    EXPECT_EQ(grow[0].category, 6u);
    ASSERT_EQ(grow[0].payload.rfind("u64:", 0), 0u) << grow[0].payload;
    EXPECT_GE(std::stoull(grow[0].payload.substr(4)), 1u << 20) << "the bytes taken from upstream";

    EXPECT_EQ(record.find_prefix("push", "load ").size(), 1u) << all;
    EXPECT_EQ(record.unmatched_pops, 0);
    EXPECT_EQ(record.left_open, 0);
}

}  // namespace
