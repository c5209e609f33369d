// The public tracing API (cudacore/tracing.hpp): its values in this process, where no tool is
// attached (nothing is made), and in a child process whose NVTX loads the tests' recording tool
// (tests/helpers/nvtx_recorder.cpp): what each range and mark carries and how they nest.
#include "cudacore/errors.hpp"
#include "cudacore/tracing.hpp"
#include "cudacore/tracing_handles.hpp"
#include "nvtx_record.hpp"
#include "test_support.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

using namespace cudacore;
using namespace cudacore::tracing;

std::filesystem::path recorder() { return test::executable_dir() / "libcudacore_nvtx_recorder.so"; }

TEST(TracingValues, PayloadKeepsEachKindOfNumber) {
    static_assert(Payload().type() == Payload::Type::none);
    static_assert(Payload(-5).type() == Payload::Type::int64 && Payload(-5).int64() == -5);
    static_assert(Payload(std::int8_t{-1}).int64() == -1);
    static_assert(Payload(42u).type() == Payload::Type::uint64 && Payload(42u).uint64() == 42);
    static_assert(Payload(std::uint64_t{1} << 63).uint64() == std::uint64_t{1} << 63);
    static_assert(Payload(2.5f).type() == Payload::Type::float64 && Payload(2.5f).float64() == 2.5);
    static_assert(!std::is_convertible_v<bool, Payload>, "a bool is not a number");
    const Payload big(1e300);
    EXPECT_EQ(big.float64(), 1e300);
}

TEST(TracingValues, ColorIsArgb) {
    static_assert(Color::rgb(0x12, 0x34, 0x56).argb == 0xFF123456u);
    static_assert(Color::rgb(255, 0, 0) == Color{0xFFFF0000u});
    static_assert(!Color{}.is_set() && Color::rgb(0, 0, 0).is_set(), "black is a colour");
    EXPECT_EQ(Color{}.argb, 0u);
}

TEST(TracingDomain, IsFoundByNameAndRefusesAnEmptyOne) {
    const Domain a("tracing-test");
    const Domain b(std::string("tracing-") + "test");
    EXPECT_EQ(a.name(), "tracing-test");
    EXPECT_EQ(a.native_handle(), b.native_handle());
    EXPECT_EQ(Domain::cudacore().name(), "cudacore");
    EXPECT_THROW(Domain(""), InvalidArgumentError);
    // Deprecated, kept one release: tested until removed.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    const RegisteredString s = a.register_string("again");
    EXPECT_EQ(s.text(), "again");
    EXPECT_EQ(a.register_string("again").text().data(), s.text().data()) << "registered once";
#pragma GCC diagnostic pop
}

TEST(TracingWithoutATool, NothingIsMadeOrCalled) {
    if (const char* path = std::getenv("NVTX_INJECTION64_PATH"); path && *path)
        GTEST_SKIP() << "an NVTX tool is attached (NVTX_INJECTION64_PATH=" << path << ")";
    EXPECT_FALSE(tool_attached());
    EXPECT_FALSE(tool_attached()) << "settled once";
    const Domain domain("no-tool");
    EXPECT_EQ(domain.native_handle(), nullptr);
    int made = 0;
    auto maker = [&] {
        ++made;
        return std::string("never");
    };
    {
        const Range range(domain, maker, {.color = Color::rgb(1, 2, 3), .payload = 1});
        const Range plain(domain, "plain");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // kept one release: still tested
        const Range registered(domain, domain.register_string("registered"));
#pragma GCC diagnostic pop
        mark(domain, maker);
        mark(domain, "plain mark", {.category = 3});
    }
    EXPECT_EQ(made, 0) << "messages are made only for a tool";
}

TEST(TracingWithATool, RangesAndMarksCarryTheirMessagesCategoriesColoursAndPayloads) {
    test::TempDir dir;
    const std::filesystem::path path = dir.path() / "record.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 60;
    const test::ProcessResult result =
        test::run_process({test::helper_path("tracing_api").string()},
                          {{"NVTX_INJECTION64_PATH", recorder().string()},
                           {"CUDACORE_NVTX_RECORD", path.string()}},
                          limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("tool attached\nmade 2\n"), std::string::npos) << result.out;
    const test::NvtxRecord record = test::read_nvtx_record(path);
    std::string all;
    for (const auto& event : record.events) all += event.kind + " " + event.domain + ": " + event.path + "\n";

    EXPECT_EQ(std::count(record.domains.begin(), record.domains.end(), "app"), 1);
    EXPECT_EQ(std::count(record.domains.begin(), record.domains.end(), "other"), 1);
    EXPECT_EQ((record.categories.at({"app", 7})), "io");
    ASSERT_EQ(record.strings.size(), 2u);
    EXPECT_EQ(record.strings[0], (std::pair<std::string, std::string>{"app", "registered step"}));
    EXPECT_EQ(record.strings[1], (std::pair<std::string, std::string>{"cudacore", "nvtx3 registered"}));

    auto only = [&](const std::string& kind, const std::string& message) {
        const auto found = record.find(kind, message);
        EXPECT_EQ(found.size(), 1u) << kind << " " << message << "\n" << all;
        return found.empty() ? test::NvtxEvent{} : found[0];
    };
    const test::NvtxEvent outer = only("push", "outer");
    EXPECT_EQ(outer.path, "outer");
    EXPECT_EQ(outer.color, "FFFF0000");
    EXPECT_EQ(outer.category, 7u);
    EXPECT_EQ(outer.payload, "i64:-5");

    const test::NvtxEvent first = only("mark", "first mark");
    EXPECT_EQ(first.path, "outer > first mark");
    EXPECT_EQ(first.payload, "u64:42");
    EXPECT_EQ(first.color, "none");
    EXPECT_EQ(first.category, 0u);

    const auto registered = record.find("push", "registered step");
    ASSERT_EQ(registered.size(), 1u) << all;
    EXPECT_EQ(registered[0].message_type, "registered");
    EXPECT_EQ(registered[0].path, "outer > registered step");
    EXPECT_EQ(registered[0].payload, "f64:2.5");

    EXPECT_EQ(only("push", "made 3").path, "outer > registered step > made 3");
    const test::NvtxEvent registered_mark = only("mark", "registered step");
    EXPECT_EQ(registered_mark.message_type, "registered");
    EXPECT_EQ(registered_mark.path, "outer > registered step > made 3 > registered step");
    EXPECT_EQ(registered_mark.category, 7u);

    const test::NvtxEvent elsewhere = only("push", "in other domain");
    EXPECT_EQ(elsewhere.domain, "other");
    EXPECT_EQ(elsewhere.path, "in other domain") << "each domain nests on its own";

    const test::NvtxEvent made = only("mark", "made mark");
    EXPECT_EQ(made.path, "outer > made mark") << "after the inner ranges ended";
    EXPECT_EQ(made.color, "80112233");
    EXPECT_EQ(made.payload, "u64:7");

    const test::NvtxEvent thread_outer = only("push", "thread outer");
    const test::NvtxEvent thread_inner = only("push", "thread inner");
    EXPECT_NE(thread_outer.thread, outer.thread);
    EXPECT_EQ(thread_outer.path, "thread outer") << "another thread's ranges nest apart";
    EXPECT_EQ(thread_inner.path, "thread outer > thread inner");

    const test::NvtxEvent nvtx3_range = only("push", "nvtx3 range");
    EXPECT_EQ(nvtx3_range.domain, "cudacore") << "NVTX3's types with tracing::nvtx3_domain";
    EXPECT_EQ(nvtx3_range.category, 1u);
    const test::NvtxEvent nvtx3_mark = only("mark", "nvtx3 registered");
    EXPECT_EQ(nvtx3_mark.domain, "cudacore");
    EXPECT_EQ(nvtx3_mark.message_type, "registered");
    EXPECT_EQ(nvtx3_mark.path, "nvtx3 range > nvtx3 registered");

    EXPECT_EQ(record.pops, 7);
    EXPECT_EQ(record.unmatched_pops, 0);
    EXPECT_EQ(record.left_open, 0);
}

TEST(TracingWithoutATool, HandlesAreEmptyAndEndingThemDoesNothing) {
    if (const char* path = std::getenv("NVTX_INJECTION64_PATH"); path && *path)
        GTEST_SKIP() << "an NVTX tool is attached (NVTX_INJECTION64_PATH=" << path << ")";
    static_assert(!RangeId().is_set() && RangeId().value() == 0);
    const Domain domain("no-tool-handles");
    int made = 0;
    RangeId range = start_range(domain, [&] {
        ++made;
        return std::string("never");
    });
    EXPECT_FALSE(range.is_set());
    end_range(range);
    RangeId plain = start_range(domain, "plain", {.category = 2});
    EXPECT_FALSE(plain.is_set());
    end_range(plain);
    name_current_thread("no tool");
    name_os_thread(1, "no tool");
    EXPECT_EQ(made, 0);
}

// Ranges by handle (start_range / end_range) and thread names, as the recording tool sees them.
TEST(TracingWithATool, RangesByHandleCrossThreadsAndOverlapAndThreadsAreNamed) {
    test::TempDir dir;
    const std::filesystem::path path = dir.path() / "record.txt";
    test::ProcessLimits limits;
    limits.timeout_seconds = 60;
    const test::ProcessResult result =
        test::run_process({test::helper_path("tracing_handles").string()},
                          {{"NVTX_INJECTION64_PATH", recorder().string()},
                           {"CUDACORE_NVTX_RECORD", path.string()}},
                          limits);
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("tool attached\nmade 1\nset 00\n"), std::string::npos) << result.out;
    std::vector<std::vector<std::string>> starts, ends, names;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        const std::vector<std::string> f = test::split_tabs(line);
        if (f.empty()) continue;
        if (f[0] == "start") starts.push_back(f);
        if (f[0] == "end") ends.push_back(f);
        if (f[0] == "thread_name") names.push_back(f);
    }
    // start THREAD DOMAIN ID MESSAGE_TYPE MESSAGE CATEGORY COLOR PAYLOAD; end THREAD DOMAIN ID
    ASSERT_EQ(starts.size(), 3u) << result.out;
    ASSERT_EQ(ends.size(), 3u) << "an ended or empty RangeId ends nothing again";
    EXPECT_EQ(starts[0][2], "handles");
    EXPECT_EQ(starts[0][5], "crosses threads");
    EXPECT_EQ(starts[0][6], "3");
    EXPECT_EQ(starts[0][8], "i64:9");
    EXPECT_EQ(ends[0][3], starts[0][3]) << "ended by its id";
    EXPECT_NE(ends[0][1], starts[0][1]) << "on the other thread";
    EXPECT_EQ(starts[1][5], "first");
    EXPECT_EQ(starts[2][5], "second");
    EXPECT_EQ(ends[1][3], starts[1][3]) << "first ends first: overlapping, not nested";
    EXPECT_EQ(ends[2][3], starts[2][3]);
    EXPECT_NE(result.out.find("ids " + starts[1][3] + " " + starts[2][3] + "\n"), std::string::npos)
        << result.out;
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0][1], starts[0][1]) << "the calling thread, by its id";
    EXPECT_EQ(names[0][2], "main thread");
    EXPECT_EQ(names[1][1], ends[0][1]);
    EXPECT_EQ(names[1][2], "second thread");
}

TEST(TracingWithATool, NoToolMeansNoRecordAndNoMessagesMade) {
    test::TempDir dir;
    const std::filesystem::path path = dir.path() / "record.txt";
    const test::ProcessResult result = test::run_process(
        {test::helper_path("tracing_api").string()},
        {{"NVTX_INJECTION64_PATH", ""}, {"CUDACORE_NVTX_RECORD", path.string()}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("no tool\nmade 0\n"), std::string::npos) << result.out;
    EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
