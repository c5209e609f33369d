// `cudacore demo` without a driver: it still compiles, links, caches and serializes, says what it
// skipped, and leaves nothing behind (the user's cache is not touched, its scratch dir is gone).
// CUDACORE_LIBCUDA_PATH points at a missing file so this holds on GPU machines too.
#include "test_support.hpp"

#include <filesystem>
#include <map>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;
using cudacore::test::cli_path;
using cudacore::test::run_process;
using cudacore::test::TempDir;

// The demo's output split into sections: the text under each "== <title>" line, by the title's
// first word ("compile", "link", ...), and the "summary: " line as "summary".
std::map<std::string, std::string> sections_of(const std::string& out) {
    std::map<std::string, std::string> sections;
    std::string current;
    std::size_t start = 0;
    while (start < out.size()) {
        std::size_t end = out.find('\n', start);
        if (end == std::string::npos) end = out.size();
        const std::string line = out.substr(start, end - start);
        if (line.rfind("== ", 0) == 0)
            current = line.substr(3, line.find_first_of(" \n", 3) - 3);
        else if (line.rfind("summary: ", 0) == 0)
            sections["summary"] += line + "\n";
        else
            sections[current] += line + "\n";
        start = end + 1;
    }
    return sections;
}

// The first capture of `pattern` in `text`, or "" when it does not match.
std::string capture(const std::string& text, const std::string& pattern) {
    std::smatch match;
    return std::regex_search(text, match, std::regex(pattern)) ? match[1].str() : std::string();
}

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size()))
        ++count;
    return count;
}

class DemoCommand : public ::testing::Test {
protected:
    // Runs the demo with no driver, its temporary files under `tmp` and the user's cache under
    // `home` (neither of which it may leave anything in).
    cudacore::test::ProcessResult run_demo() {
        return run_process({cli_path().string(), "demo"},
                           {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-for-demo.so.1"},
                            {"TMPDIR", tmp.path().string()},
                            {"HOME", home.path().string()},
                            {"XDG_CACHE_HOME", ""},
                            {"CUDACORE_CACHE_DIR", ""},
                            {"CUDACORE_DISABLE_CACHE", ""}});
    }

    TempDir tmp, home;
};

TEST_F(DemoCommand, RunsEveryCpuStepAndSaysWhatItSkipped) {
    const auto result = run_demo();
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string& out = result.out;
    EXPECT_EQ(out.find("FAILED"), std::string::npos) << out;
    auto sections = sections_of(out);

    EXPECT_NE(sections["devices"].find("SKIPPED: no CUDA driver"), std::string::npos) << out;

    // compile: both programs, with the template's lowered name.
    const std::string saxpy_bytes = capture(sections["compile"], R"(saxpy: (\d+) bytes in)");
    ASSERT_FALSE(saxpy_bytes.empty()) << out;
    EXPECT_NE(sections["compile"].find("block_sum<float, 256> -> _Z"), std::string::npos) << out;

    // link: two LTO-IR units linked by nvJitLink into a cubin that holds the kernel.
    const std::string& link = sections["link"];
    EXPECT_TRUE(std::regex_search(link, std::regex(R"(LTO-IR: kernel unit [1-9]\d* bytes )"
                                                   R"(\+ device-function unit [1-9]\d* bytes)")))
        << out;
    EXPECT_TRUE(std::regex_search(
        link, std::regex(R"(linked by nvJitLink \(-lto\) into a cubin of [1-9]\d* bytes)")))
        << out;
    EXPECT_NE(link.find("cubin for sm_90 holds linked_square_add: OK"), std::string::npos) << out;
    EXPECT_NE(link.find("-- launch the linked kernel (linked_square_add)\n"
                        "SKIPPED: launching needs a GPU"),
              std::string::npos)
        << out;

    // cache: a miss, then a hit equal to it (the same bytes as the compile step's saxpy).
    const std::string& cache = sections["cache"];
    const std::size_t miss = cache.find("first call: miss in ");
    const std::size_t hit = cache.find("second call: hit in ");
    ASSERT_NE(miss, std::string::npos) << out;
    ASSERT_NE(hit, std::string::npos) << out;
    EXPECT_LT(miss, hit) << out;
    // The code, under the key of what NVRTC was given.
    EXPECT_NE(cache.find("(cache now 1 entry, "), std::string::npos) << out;
    EXPECT_NE(cache.find("speed-up "), std::string::npos) << out;
    EXPECT_EQ(capture(cache, R"(hit == miss == a plain compile \(bytes, (\d+)\): OK)"), saxpy_bytes)
        << out;

    // serialize: sizes agree and the loaded copy equals the original.
    const std::string& serialize = sections["serialize"];
    std::smatch sizes;
    ASSERT_TRUE(std::regex_search(
        serialize, sizes,
        std::regex(R"(serialize\(\): (\d+) code bytes -> (\d+) bytes; )"
                   R"(save\(\) wrote (\d+) bytes)")))
        << out;
    EXPECT_EQ(sizes[1].str(), saxpy_bytes);
    EXPECT_GT(std::stoull(sizes[2].str()), std::stoull(sizes[1].str()));
    EXPECT_EQ(sizes[3].str(), sizes[2].str());
    EXPECT_NE(serialize.find("ObjectCode::from_saved(path) == original (cubin \"saxpy\", " +
                             saxpy_bytes + " bytes): OK"),
              std::string::npos)
        << out;
    EXPECT_NE(serialize.find("-- launch saxpy from the deserialized code\n"
                             "SKIPPED: launching needs a GPU"),
              std::string::npos)
        << out;

    // bundle: <cuda/std/cmath> saved as a bundle file, loaded, and the kernel compiled from it
    // alone is the toolkit folder's cubin.
    const std::string& bundle = sections["bundle"];
    EXPECT_TRUE(std::regex_search(
        bundle, std::regex(R"(<cuda/std/cmath> and what it includes: (\d+) headers, )")))
        << out;
    EXPECT_NE(bundle.find("cubin equal to the toolkit folder's: OK"), std::string::npos) << out;
    EXPECT_NE(bundle.find("-- launch the kernel compiled from the bundle\n"
                          "SKIPPED: launching needs a GPU"),
              std::string::npos)
        << out;

    // fatbin: saxpy for sm_80, sm_90 and compute_90 in one call, listed image by image.
    const std::string& fatbin = sections["fatbin"];
    EXPECT_TRUE(std::regex_search(fatbin, std::regex(R"(one fatbin of [1-9]\d* bytes in )"))) << out;
    EXPECT_TRUE(std::regex_search(fatbin, std::regex(R"(\n  elf  sm_80 +[1-9]\d* bytes)"))) << out;
    EXPECT_TRUE(std::regex_search(fatbin, std::regex(R"(\n  elf  sm_90 +[1-9]\d* bytes)"))) << out;
    EXPECT_TRUE(std::regex_search(fatbin, std::regex(R"(\n  ptx  compute_90 +[1-9]\d* bytes)"))) << out;
    EXPECT_NE(fatbin.find("a cubin per arch and PTX for newer GPUs: OK"), std::string::npos) << out;
    EXPECT_NE(fatbin.find("-- launch saxpy from the fatbin (the driver picks the device's image)\n"
                          "SKIPPED: launching needs a GPU"),
              std::string::npos)
        << out;
    EXPECT_EQ(sections["driver"], "SKIPPED: a failing driver call needs a GPU\n") << out;

    // Every GPU part says SKIPPED: the linked, bundled, fatbin and deserialized launches, saxpy
    // and reduction.
    EXPECT_EQ(sections["load"], "SKIPPED: loading needs a GPU\n") << out;
    EXPECT_EQ(sections["saxpy"], "SKIPPED: launching needs a GPU\n") << out;
    EXPECT_EQ(sections["reduction"], "SKIPPED: launching needs a GPU\n") << out;
    EXPECT_EQ(sections["graph"], "SKIPPED: capturing and replaying a graph needs a GPU\n") << out;
    // A kernel written for nvcc compiles with cudacore's standard headers, and a long compile is
    // cancelled from another thread.
    EXPECT_NE(sections["nvcc-style"].find("scaled<float> with <cmath>"), std::string::npos) << out;
    EXPECT_NE(sections["nvcc-style"].find("cancelled at 100 ms returned at"), std::string::npos) << out;
    EXPECT_NE(sections["nvcc-style"].find(": OK"), std::string::npos) << out;
    EXPECT_EQ(sections["slices"], "SKIPPED: slices of device memory need a GPU\n") << out;
    EXPECT_EQ(count_of(out, "SKIPPED: launching needs a GPU"), 6u) << out;

    // The summary is the last line.
    const std::string summary =
        "summary: ran compile, link, cache, cache artefact, bundle, fatbin, serialize, nvcc-style; skipped devices, "
        "linked launch, bundled launch, fatbin launch, deserialized launch, load, saxpy, reduction, "
        "driver log, graph, slices (no CUDA driver on this machine); all checks passed\n";
    EXPECT_EQ(sections["summary"], summary) << out;
    ASSERT_GE(out.size(), summary.size());
    EXPECT_EQ(out.substr(out.size() - summary.size()), summary) << out;
}

TEST_F(DemoCommand, LeavesNoFilesAndMissesThenHitsOnEveryRun) {
    for (int run = 0; run < 2; ++run) {
        const auto result = run_demo();
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        // A fresh cache each run: the first call is always a miss.
        EXPECT_NE(result.out.find("first call: miss in "), std::string::npos) << result.out;
        EXPECT_NE(result.out.find("second call: hit in "), std::string::npos) << result.out;

        // The cache directory it named was inside TMPDIR and is gone with its parent.
        const fs::path cache_dir =
            capture(result.out, R"(fresh cache directory (\S+) \(removed at the end\))");
        ASSERT_FALSE(cache_dir.empty()) << result.out;
        EXPECT_EQ(cache_dir.parent_path().parent_path(), tmp.path()) << result.out;
        EXPECT_FALSE(fs::exists(cache_dir.parent_path())) << cache_dir;
        EXPECT_TRUE(fs::is_empty(tmp.path()));
        // The user's cache (under HOME) was never created. (Other tools may write under HOME,
        // e.g. the CUDA toolkit's own caches on some machines: only cudacore's place counts.)
        EXPECT_FALSE(fs::exists(home.path() / ".cache" / "cudacore")) << home.path();
    }
}

}  // namespace
