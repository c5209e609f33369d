// NVTX ranges: a child process that compiles through a cache, links and loads runs with NVTX's
// tool-injection variable pointing at a recording library built with the tests
// (tests/helpers/nvtx_recorder.cpp); the ranges it records name each step, in the "cudacore"
// domain, and every range pushed is popped. Without the variable nothing is recorded.
#include "test_support.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

std::vector<std::string> lines_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::filesystem::path recorder() { return test::executable_dir() / "libcudacore_nvtx_recorder.so"; }

TEST(NvtxRanges, CompileLinkLoadAndEachCacheLookupAndStoreAreRecorded) {
    test::TempDir dir;
    const std::filesystem::path record = dir.path() / "ranges.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 120;
    const test::ProcessResult result = test::run_process(
        {test::helper_path("nvtx_ranges").string(), (dir.path() / "cache").string()},
        {{"NVTX_INJECTION64_PATH", recorder().string()}, {"CUDACORE_NVTX_RECORD", record.string()}},
        limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::vector<std::string> lines = lines_of(record);
    ASSERT_FALSE(lines.empty()) << "the recording library was not loaded";

    std::map<std::string, int> pushed;
    int pops = 0;
    for (const auto& line : lines) {
        if (line.starts_with("push cudacore/")) ++pushed[line.substr(14)];
        if (line == "pop cudacore") ++pops;
    }
    EXPECT_EQ(std::count(lines.begin(), lines.end(), "domain cudacore"), 1);
    // Two compiles: the cached one (a miss) and the one whose PTX is linked.
    EXPECT_EQ(pushed["compile"], 2);
    EXPECT_EQ(pushed["link"], 1);
    EXPECT_EQ(pushed["load"], 1);
    // Each lookup and store, in each tier: the miss asks for the header list (memory, disk),
    // then stores the code and the list (tiered, memory, disk); the hit finds both in memory.
    EXPECT_GE(pushed["cache get tiered"], 3);
    EXPECT_GE(pushed["cache get memory"], 3);
    EXPECT_GE(pushed["cache get disk"], 1);
    EXPECT_EQ(pushed["cache put tiered"], 2);
    EXPECT_EQ(pushed["cache put memory"], 2);
    EXPECT_EQ(pushed["cache put disk"], 2);
    int total = 0;
    for (const auto& [name, count] : pushed) total += count;
    EXPECT_EQ(pops, total) << "every range pushed is popped";
}

TEST(NvtxRanges, NothingIsRecordedWithoutATool) {
    test::TempDir dir;
    const std::filesystem::path record = dir.path() / "ranges.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 120;
    const test::ProcessResult result = test::run_process(
        {test::helper_path("nvtx_ranges").string(), (dir.path() / "cache").string()},
        {{"NVTX_INJECTION64_PATH", ""}, {"CUDACORE_NVTX_RECORD", record.string()}}, limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(std::filesystem::exists(record));
}

}  // namespace
