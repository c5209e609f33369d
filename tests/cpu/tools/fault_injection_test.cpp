// Faults injected where cudacore writes files or starts processes (tests/support/fault_injection.c,
// preloaded): a full disk under the cache never fails a compile; a full disk under the output
// fails the command clearly and leaves no partial file; no descriptors or no processes for the
// link worker are named as such; compile_many's processes strategy without fork goes on with
// fewer processes or fails clearly, and never hangs. Every test checks that its fault was
// reached (the library's report), so none passes by missing it.
#include "test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using cudacore::test::cli_path;
using cudacore::test::ProcessResult;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

constexpr const char* kKernel = "extern \"C\" __global__ void fill(int* p) { p[threadIdx.x] = 7; }\n";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::size_t lines_in(const fs::path& file) {
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

std::size_t temporaries_under(const fs::path& dir) {
    std::size_t n = 0;
    std::error_code error;
    for (const auto& entry : fs::recursive_directory_iterator(dir, error))
        if (contains(entry.path().filename().string(), ".tmp-")) ++n;
    return n;
}

struct Fault {
    std::string calls;
    std::string error;
    std::string path;  // empty: every call
    int after = 0;
    int times = 0;  // 0: every matching call
};

struct FaultInjection : ::testing::Test {
    TempDir dir;
    fs::path cache = dir.path() / "cache";
    fs::path out = dir.path() / "out";
    fs::path report = dir.path() / "faults";
    fs::path source = dir.path() / "k.cu";

    void SetUp() override {
        fs::create_directories(out);
        write_file(source, kKernel);
    }

    std::map<std::string, std::string> environment(const Fault& fault) const {
        return cudacore::test::fault_injection_env(
            {{"CUDACORE_FAULT_CALLS", fault.calls},
             {"CUDACORE_FAULT_ERRNO", fault.error},
             {"CUDACORE_FAULT_PATH", fault.path},
             {"CUDACORE_FAULT_AFTER", fault.after ? std::to_string(fault.after) : ""},
             {"CUDACORE_FAULT_TIMES", fault.times ? std::to_string(fault.times) : ""},
             {"CUDACORE_FAULT_REPORT", report.string()},
             {"CUDACORE_CACHE_DIR", cache.string()},
             {"CUDACORE_DISABLE_CACHE", ""},
             {"TMPDIR", dir.path().string()}});
    }
    ProcessResult run(std::vector<std::string> argv, const Fault& fault) const {
        return run_process(argv, environment(fault), {.timeout_seconds = 180});
    }
    std::vector<std::string> compile(const fs::path& output, bool cache_on = true) const {
        std::vector<std::string> argv{cli_path().string(), "compile", source.string(), "-o",
                                      output.string(), "--arch", "sm_90", "--target", "ptx"};
        if (!cache_on) argv.push_back("--no-cache");
        return argv;
    }
};

// The library does what it is told, and reports it: the check every other test leans on.
TEST_F(FaultInjection, TheLibraryFailsTheChosenCallsOnly) {
    // dd writes with write(2) (cp may copy with copy_file_range, which is not interposed).
    auto dd = [&](const fs::path& to) {
        return std::vector<std::string>{"/bin/dd", "if=" + source.string(), "of=" + to.string(), "status=none"};
    };
    const auto other = run(dd(out / "other"),
                           {.calls = "write", .error = "ENOSPC", .path = "chosen"});
    EXPECT_EQ(other.exit_code, 0) << other.err;
    EXPECT_EQ(read_file(out / "other"), kKernel);
    const auto result = run(dd(out / "chosen"),
                            {.calls = "write", .error = "ENOSPC", .path = "chosen"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_TRUE(contains(result.err, "No space left on device")) << result.err;
    EXPECT_EQ(lines_in(report), 1u);
    const auto later = run(dd(out / "chosen"),
                           {.calls = "write", .error = "ENOSPC", .path = "chosen", .after = 1});
    EXPECT_EQ(later.exit_code, 0) << later.err;  // the first matching call passes
    EXPECT_EQ(lines_in(report), 1u);
}

// A full disk under the cache (its writes and renames) is a warning: the compile succeeds and
// writes the same code as one without the cache, and the cache keeps no temporary file.
TEST_F(FaultInjection, AFullDiskUnderTheCacheNeverFailsACompile) {
    const auto plain = run(compile(out / "plain.ptx", false), {});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    for (const char* calls : {"write", "rename", "write,rename,fallocate,pwrite"}) {
        fs::remove_all(cache);
        fs::remove(report);
        const auto result = run(compile(out / "cached.ptx"), {.calls = calls, .error = "ENOSPC",
                                                              .path = cache.string()});
        EXPECT_EQ(result.exit_code, 0) << calls << ": " << result.err;
        EXPECT_GT(lines_in(report), 0u) << calls << ": no fault reached";
        EXPECT_TRUE(contains(result.err, "warning")) << result.err;
        EXPECT_EQ(read_file(out / "cached.ptx"), read_file(out / "plain.ptx")) << calls;
        EXPECT_EQ(temporaries_under(cache), 0u) << calls;
    }
}

// A full disk under the output: exit 1 with the path and the reason, no output file (a previous
// one stays whole), no temporary file; for compile and for link.
TEST_F(FaultInjection, AFullDiskUnderTheOutputFailsClearlyAndLeavesNoPartialFile) {
    const auto ltoir = run({cli_path().string(), "compile", source.string(), "-o", (dir.path() / "k.ltoir").string(),
                            "--arch", "sm_90", "--target", "ltoir", "--no-cache"}, {});
    ASSERT_EQ(ltoir.exit_code, 0) << ltoir.err;
    const std::vector<std::vector<std::string>> commands{
        compile(out / "k.ptx", false),
        {cli_path().string(), "link", (dir.path() / "k.ltoir").string(), "--lto", "--arch", "sm_90", "-o",
         (out / "k.cubin").string()}};
    for (const auto& argv : commands) {
        const fs::path output = argv.back() == "--no-cache" ? out / "k.ptx" : out / "k.cubin";
        for (const char* calls : {"write", "rename"}) {
            fs::remove(report);
            const auto result = run(argv, {.calls = calls, .error = "ENOSPC", .path = out.string()});
            EXPECT_EQ(result.exit_code, 1) << argv[1] << " " << calls << ": " << result.err;
            EXPECT_GT(lines_in(report), 0u) << calls << ": no fault reached";
            EXPECT_TRUE(contains(result.err, "cannot write '" + output.string() + "'")) << result.err;
            EXPECT_TRUE(contains(result.err, " failed: ENOSPC (No space left on device): the file system is full"))
                << result.err;
            EXPECT_FALSE(fs::exists(output)) << output;
            EXPECT_EQ(temporaries_under(out), 0u);
        }
        // A previous output stays as it was.
        write_file(output, "previous");
        const auto again = run(argv, {.calls = "write", .error = "ENOSPC", .path = out.string()});
        EXPECT_EQ(again.exit_code, 1);
        EXPECT_EQ(read_file(output), "previous");
        fs::remove(output);
    }
}

struct LinkWorkerFaults : FaultInjection {
    fs::path ltoir = dir.path() / "k.ltoir";
    void SetUp() override {
        FaultInjection::SetUp();
        const auto made = run({cli_path().string(), "compile", source.string(), "-o", ltoir.string(),
                               "--arch", "sm_90", "--target", "ltoir", "--no-cache"}, {});
        ASSERT_EQ(made.exit_code, 0) << made.err;
    }
    ProcessResult link(const Fault& fault) const {
        return run({cli_path().string(), "link", ltoir.string(), "--lto", "--arch", "sm_90", "-o",
                    (out / "k.cubin").string()}, fault);
    }
};

// No descriptor for the worker's channels: the message names the call, EMFILE and the limit.
TEST_F(LinkWorkerFaults, NoDescriptorsIsNamed) {
    for (const char* calls : {"socket", "pipe"}) {
        fs::remove(report);
        const auto result = link({.calls = calls, .error = "EMFILE"});
        EXPECT_EQ(result.exit_code, 1) << result.err;
        EXPECT_GT(lines_in(report), 0u) << calls << ": no fault reached";
        EXPECT_TRUE(contains(result.err, calls)) << result.err;  // socketpair, pipe2
        EXPECT_TRUE(contains(result.err, "EMFILE")) << result.err;
        EXPECT_TRUE(contains(result.err, "Too many open files")) << result.err;
        EXPECT_TRUE(contains(result.err, "RLIMIT_NOFILE")) << result.err;
        EXPECT_FALSE(contains(result.err, "CUDACORE_LINK_WORKER")) << result.err;
        EXPECT_FALSE(fs::exists(out / "k.cubin"));
    }
}

// No process for the worker: the message names posix_spawn, EAGAIN and the process limit.
TEST_F(LinkWorkerFaults, NoProcessesIsNamed) {
    const auto result = link({.calls = "posix_spawn", .error = "EAGAIN"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_EQ(lines_in(report), 1u);
    EXPECT_TRUE(contains(result.err, "posix_spawn failed: EAGAIN")) << result.err;
    EXPECT_TRUE(contains(result.err, "Resource temporarily unavailable")) << result.err;
    EXPECT_TRUE(contains(result.err, "RLIMIT_NPROC")) << result.err;
    EXPECT_FALSE(contains(result.err, "CUDACORE_LINK_WORKER")) << result.err;
    // Without the fault, the same link succeeds.
    const auto missing = run({cli_path().string(), "link", ltoir.string(), "--lto", "--arch", "sm_90", "-o",
                              (out / "k.cubin").string()},
                             {.calls = "none"});
    EXPECT_EQ(missing.exit_code, 0) << missing.err;
}

// compile_many with processes: fork failing while children run goes on with fewer; fork failing
// with none running fails with a message naming fork, EAGAIN and the limit. Neither hangs (the
// run is bounded).
TEST_F(FaultInjection, CompileManyProcessesWithoutForkFallsBackOrFailsClearly) {
    const std::string helper = cudacore::test::helper_path("compile_many_processes").string();
    const auto passing = run({helper}, {.calls = "fork", .error = "EAGAIN", .after = 1, .times = 1});
    EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err;
    EXPECT_TRUE(contains(passing.out, "compiled 4")) << passing.out;
    EXPECT_EQ(lines_in(report), 1u);
    fs::remove(report);
    const auto failing = run({helper}, {.calls = "fork", .error = "EAGAIN"});
    EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
    EXPECT_GT(lines_in(report), 0u);
    EXPECT_TRUE(contains(failing.out, "fork failed: EAGAIN (Resource temporarily unavailable)")) << failing.out;
    EXPECT_TRUE(contains(failing.out, "RLIMIT_NPROC")) << failing.out;
}

}  // namespace
