// cudacore's own tracing: a child process that compiles through a two-tier cache (a miss, a
// memory hit, a disk hit), links and loads runs with NVTX's tool-injection variable pointing at
// a recording library built with the tests (tests/helpers/nvtx_recorder.cpp). The record shows
// each step as a range in the "cudacore" domain, with its category and colour, the cache's
// outcomes and the compile's PCH outcome as marks inside the ranges they end, and every range
// popped where it was pushed. Without the variable nothing is recorded.
#include "nvtx_record.hpp"
#include "test_support.hpp"

#include <string>
#include <vector>

namespace {

using namespace cudacore;

std::filesystem::path recorder() { return test::executable_dir() / "libcudacore_nvtx_recorder.so"; }

// A line "KEY VALUE" of the helper's output.
std::string printed(const std::string& out, const std::string& key) {
    const std::size_t at = out.find(key + " ");
    if (at == std::string::npos) return "";
    const std::size_t begin = at + key.size() + 1;
    return out.substr(begin, out.find('\n', begin) - begin);
}

bool has_path(const std::vector<test::NvtxEvent>& events, const std::string& path) {
    for (const auto& event : events)
        if (event.path == path) return true;
    return false;
}

std::string paths(const test::NvtxRecord& record) {
    std::string text;
    for (const auto& event : record.events) text += event.kind + " " + event.path + "\n";
    return text;
}

class CudacoreTracing : public ::testing::Test {
protected:
    void SetUp() override {
        const test::ProcessResult result = test::run_process(
            {test::helper_path("tracing_cudacore").string(), (dir_.path() / "cache").string()},
            {{"NVTX_INJECTION64_PATH", recorder().string()},
             {"CUDACORE_NVTX_RECORD", (dir_.path() / "record.txt").string()}},
            limits());
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        out_ = result.out;
        record_ = test::read_nvtx_record(dir_.path() / "record.txt");
        ASSERT_FALSE(record_.events.empty()) << "the recording library was not loaded";
    }
    static test::ProcessLimits limits() {
        test::ProcessLimits limits;
        limits.timeout_seconds = 120;
        return limits;
    }
    test::TempDir dir_;
    std::string out_;
    test::NvtxRecord record_;
};

TEST_F(CudacoreTracing, TheDomainAndItsCategoriesAreNamedOnce) {
    EXPECT_EQ(std::count(record_.domains.begin(), record_.domains.end(), "cudacore"), 1);
    const std::vector<std::pair<std::uint32_t, std::string>> named = {
        {1, "compile"}, {2, "link"}, {3, "cache"}, {4, "load"}, {5, "graph"}, {6, "memory"}};
    for (const auto& [id, name] : named) EXPECT_EQ((record_.categories[{"cudacore", id}]), name);
}

TEST_F(CudacoreTracing, EachCachedCompileIsARangeNamedAfterTheProgram) {
    const auto cached = record_.find("push", "compile_cached twice.cu");
    ASSERT_EQ(cached.size(), 3u) << paths(record_);
    for (const auto& range : cached) {
        EXPECT_EQ(range.path, "compile_cached twice.cu") << "not inside another range";
        EXPECT_EQ(range.category, 1u);
        EXPECT_NE(range.color, "none");
    }
    // The miss compiles inside its cached compile; the hits do not compile.
    const auto compiles = record_.find("push", "compile twice.cu (cubin)");
    ASSERT_FALSE(compiles.empty()) << paths(record_);
    for (const auto& range : compiles)
        EXPECT_EQ(range.path.rfind("compile_cached twice.cu > ", 0), 0u) << range.path;
    // The program compiled to PTX for the link is not a cached compile.
    const auto ptx = record_.find("push", "compile twice.cu (ptx)");
    ASSERT_EQ(ptx.size(), 1u) << paths(record_);
    EXPECT_EQ(ptx[0].path, "compile twice.cu (ptx)");
}

TEST_F(CudacoreTracing, ThePchOutcomeIsAMarkInsideTheCompile) {
    const std::string outcome = printed(out_, "pch");
    ASSERT_FALSE(outcome.empty()) << out_;
    const auto marks = record_.find_prefix("mark", "PCH " + outcome);
    ASSERT_FALSE(marks.empty()) << paths(record_);
    const std::string inside = "compile twice.cu (cubin) > " + marks[0].message;
    EXPECT_EQ(marks[0].path.substr(marks[0].path.size() - std::min(marks[0].path.size(), inside.size())),
              inside);
    EXPECT_EQ(marks[0].category, 1u);
    // Every compile has one, also the one to PTX.
    EXPECT_EQ(record_.find_prefix("mark", "PCH ").size(),
              record_.find_prefix("push", "compile twice.cu").size());
}

TEST_F(CudacoreTracing, CacheOutcomesAreMarksInsideTheLookupOfTheirTier) {
    const std::string lookup = "compile_cached twice.cu > cache get tiered > ";
    // The first cached compile misses in both tiers.
    EXPECT_TRUE(has_path(record_.find("mark", "cache miss memory"),
                         lookup + "cache get memory > cache miss memory"))
        << paths(record_);
    EXPECT_TRUE(has_path(record_.find("mark", "cache miss disk"),
                         lookup + "cache get disk > cache miss disk"))
        << paths(record_);
    // The second finds the code in memory, the third (a new memory tier) on disk.
    EXPECT_TRUE(has_path(record_.find("mark", "cache hit memory"),
                         lookup + "cache get memory > cache hit memory"))
        << paths(record_);
    EXPECT_TRUE(has_path(record_.find("mark", "cache hit disk"),
                         lookup + "cache get disk > cache hit disk"))
        << paths(record_);
    // The miss stores in both tiers, inside the tiered store.
    EXPECT_TRUE(has_path(record_.find("mark", "cache store disk"),
                         "compile_cached twice.cu > cache put tiered > cache put disk > cache store disk"))
        << paths(record_);
    // The hits come after the compile.
    std::size_t first_compile = record_.events.size(), first_hit = 0;
    for (std::size_t i = 0; i < record_.events.size(); ++i) {
        if (record_.events[i].message == "compile twice.cu (cubin)" && first_compile == record_.events.size())
            first_compile = i;
        if (record_.events[i].message == "cache hit memory" && first_hit == 0) first_hit = i;
    }
    EXPECT_LT(first_compile, first_hit);
    for (const auto& event : record_.find_prefix("mark", "cache ")) EXPECT_EQ(event.category, 3u);
}

TEST_F(CudacoreTracing, LinkAndLoadAreRangesWithTheirCategory) {
    const auto link = record_.find("push", "link twice-link");
    ASSERT_EQ(link.size(), 1u) << paths(record_);
    EXPECT_EQ(link[0].path, "link twice-link");
    EXPECT_EQ(link[0].category, 2u);
    const auto load = record_.find_prefix("push", "load ");
    ASSERT_EQ(load.size(), 1u) << paths(record_);
    EXPECT_EQ(load[0].path, load[0].message);
    EXPECT_EQ(load[0].category, 4u);
    EXPECT_EQ(load[0].payload, "u64:" + printed(out_, "bytes")) << "the payload is the code's size";
}

TEST_F(CudacoreTracing, EveryEventHasACategoryAndColourAndEveryRangeIsPopped) {
    for (const auto& event : record_.events) {
        EXPECT_EQ(event.domain, "cudacore");
        EXPECT_EQ(event.message_type, "ascii");
        EXPECT_GE(event.category, 1u) << event.path;
        EXPECT_LE(event.category, 6u) << event.path;
        EXPECT_NE(event.color, "none") << event.path;
    }
    EXPECT_EQ(record_.unmatched_pops, 0);
    EXPECT_EQ(record_.left_open, 0);
    EXPECT_EQ(record_.pops, static_cast<int>(record_.find_prefix("push", "").size()));
}

TEST(CudacoreTracingWithoutATool, NothingIsRecorded) {
    test::TempDir dir;
    const std::filesystem::path record = dir.path() / "record.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 120;
    const test::ProcessResult result = test::run_process(
        {test::helper_path("tracing_cudacore").string(), (dir.path() / "cache").string()},
        {{"NVTX_INJECTION64_PATH", ""}, {"CUDACORE_NVTX_RECORD", record.string()}}, limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(std::filesystem::exists(record));
}

}  // namespace
