// Precompiled headers: on by default for C++ programs, Program::pch_status() for each outcome
// (created, used, not attempted, failed), and a PCH failure falling back to a plain compile. No
// GPU needed. NVRTC's PCH state is per process; each test uses its own macro so that it makes
// its own PCH. The heap test runs last (it resizes the process-wide PCH heap).
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/program.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

namespace {

using namespace cudacore;

// Two different kernels with the same (empty) leading directives: the second can use the PCH
// the first made.
constexpr const char* kFirst = R"(
extern "C" __global__ void first_kernel(float* data) { data[threadIdx.x] *= 2.0f; }
)";
constexpr const char* kSecond = R"(
extern "C" __global__ void second_kernel(int* data) { data[threadIdx.x] += 7; }
)";

ProgramOptions options_for(const std::string& test) {
    ProgramOptions options;
    options.name = test;
    options.arch = "sm_90";
    options.toolkit_include_path = false;
    // Options differ between tests, so no test uses another's PCH.
    options.define_macro = {{"PCH_TEST_" + test, std::nullopt}};
    return options;
}

bool has_flag(const std::vector<std::string>& flags, const std::string& flag) {
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

TEST(Pch, OnByDefaultForCxx) {
    ProgramOptions options = options_for("default_flags");
    EXPECT_TRUE(has_flag(Program(kFirst, SourceType::cxx, options).flags(CodeType::ptx), "--pch"));
    options.pch = false;
    EXPECT_FALSE(has_flag(Program(kFirst, SourceType::cxx, options).flags(CodeType::ptx), "--pch"));
    options.pch.reset();
    options.create_pch = "explicit.pch";  // explicit PCH replaces the automatic one
    const auto flags = Program(kFirst, SourceType::cxx, options).flags(CodeType::ptx);
    EXPECT_FALSE(has_flag(flags, "--pch"));
    EXPECT_TRUE(has_flag(flags, "--create-pch=explicit.pch"));
}

TEST(Pch, NothingBeforeTheFirstCompile) {
    Program program(kFirst, SourceType::cxx, options_for("before"));
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::not_attempted);
}

TEST(Pch, CreatedThenUsedByAnotherKernel) {
    const ProgramOptions options = options_for("created_used");
    Program first(kFirst, SourceType::cxx, options);
    const ObjectCode first_code = first.compile(CodeType::ptx);
    EXPECT_EQ(first.pch_status().outcome, PchOutcome::created) << first.pch_status().reason;
    EXPECT_FALSE(first.pch_status().file.empty());
    EXPECT_GT(first.pch_status().heap_size_required, 0u);
    // NVRTC's PCH messages go to pch_status(), not the log.
    EXPECT_EQ(first.log().find("precompiled header file"), std::string::npos) << first.log();

    Program second(kSecond, SourceType::cxx, options);
    const ObjectCode second_code = second.compile(CodeType::ptx);
    EXPECT_EQ(second.pch_status().outcome, PchOutcome::used) << second.pch_status().reason;
    EXPECT_EQ(second.pch_status().file, first.pch_status().file);
    EXPECT_EQ(second.log().find("precompiled header file"), std::string::npos) << second.log();
    EXPECT_NE(second_code.code().find("second_kernel"), std::string_view::npos);

    // The code is the same as without PCH.
    ProgramOptions off = options;
    off.pch = false;
    EXPECT_EQ(Program(kSecond, SourceType::cxx, off).compile(CodeType::ptx).code(),
              second_code.code());
}

TEST(Pch, OffIsNotAttempted) {
    ProgramOptions options = options_for("off");
    options.pch = false;
    Program program(kFirst, SourceType::cxx, options);
    program.compile(CodeType::ptx);
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::not_attempted);
    EXPECT_NE(program.pch_status().reason.find("off"), std::string::npos)
        << program.pch_status().reason;
    EXPECT_TRUE(program.pch_status().file.empty());
}

TEST(Pch, PtxProgramIsNotAttempted) {
    ProgramOptions options = options_for("ptx_source");
    options.define_macro.clear();
    options.toolkit_include_path = true;
    const std::string ptx(Program(kFirst, SourceType::cxx, options_for("ptx_maker"))
                              .compile(CodeType::ptx)
                              .code());
    ProgramOptions ptx_options;
    ptx_options.arch = "sm_90";
    Program program(ptx, SourceType::ptx, ptx_options);
    program.compile(CodeType::cubin);
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::not_attempted);
    EXPECT_NE(program.pch_status().reason.find("PTX"), std::string::npos);
}

TEST(Pch, FailureFallsBackToAPlainCompile) {
    test::TempDir dir;
    ProgramOptions options = options_for("bad_dir");
    options.pch_dir = (dir.path() / "no" / "such" / "dir").string();
    Program program(kFirst, SourceType::cxx, options);
    ObjectCode code = program.compile(CodeType::ptx);  // does not throw
    EXPECT_NE(code.code().find("first_kernel"), std::string_view::npos);
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::failed);
    // NVRTC's own words say why.
    EXPECT_NE(program.pch_status().reason.find("PCH directory"), std::string::npos)
        << program.pch_status().reason;

    ProgramOptions off = options_for("bad_dir");
    off.pch = false;
    EXPECT_EQ(Program(kFirst, SourceType::cxx, off).compile(CodeType::ptx).code(), code.code());
}

TEST(Pch, CodeErrorsAreNotBlamedOnPch) {
    Program program("__global__ void broken( { }", SourceType::cxx, options_for("broken"));
    try {
        program.compile(CodeType::ptx);
        FAIL() << "a syntax error compiled";
    } catch (const CompileError& e) {
        EXPECT_TRUE(has_flag(e.options(), "--pch")) << "compiled a second time without PCH";
        EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    }
    EXPECT_NE(program.pch_status().outcome, PchOutcome::failed) << program.pch_status().reason;
}

// The folder for automatic PCH is chosen on the first compile that uses it, so these run in a
// fresh process (a death test's child) and end it with 0 when every expectation held; what
// failed is printed, and the regex shows it.
int expect_pch_off_without_failing(const std::string& reason_part) {
    test::WarningLog warnings;
    for (const char* test : {"off_1", "off_2"}) {
        Program program(kFirst, SourceType::cxx, options_for(test));
        const ObjectCode code = program.compile(CodeType::ptx);  // does not throw
        if (code.code().find("first_kernel") == std::string_view::npos) {
            std::fprintf(stderr, "no kernel in the PTX\n");
            return 1;
        }
        const PchStatus& status = program.pch_status();
        if (status.outcome != PchOutcome::not_attempted ||
            status.reason.find(reason_part) == std::string::npos) {
            std::fprintf(stderr, "status %s: %s\n", to_string(status.outcome).c_str(), status.reason.c_str());
            return 1;
        }
    }
    // Once per process and folder, naming the folder and the reason.
    if (warnings.seen.size() != 1 || warnings.seen[0].kind != WarningKind::pch_off ||
        warnings.seen[0].message.find(reason_part) == std::string::npos) {
        std::fprintf(stderr, "%zu warnings: %s\n", warnings.seen.size(),
                     warnings.seen.empty() ? "" : warnings.seen[0].message.c_str());
        return 1;
    }
    return 0;
}

TEST(Pch, AMissingOrRelativeTmpdirTurnsPchOffWithOneWarning) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::setenv("TMPDIR", "/nonexistent-cudacore-tmp", 1);
            std::exit(expect_pch_off_without_failing(
                "the temporary directory '/nonexistent-cudacore-tmp' (from TMPDIR) does not exist"));
        },
        ::testing::ExitedWithCode(0), "");
    EXPECT_EXIT(
        {
            ::setenv("TMPDIR", "relative", 1);
            std::exit(expect_pch_off_without_failing("'relative' (from TMPDIR) is a relative path"));
        },
        ::testing::ExitedWithCode(0), "");
}

// A file size limit below the PCH heap stands in for a nearly full file system (where NVRTC's
// PCH died with SIGBUS): no PCH is attempted.
TEST(Pch, NoRoomForAPchTurnsItOffWithOneWarning) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            ::signal(SIGXFSZ, SIG_IGN);
            rlimit limit{};
            limit.rlim_cur = limit.rlim_max = 16 << 20;
            ::setrlimit(RLIMIT_FSIZE, &limit);
            std::exit(expect_pch_off_without_failing("the file size limit (16777216 bytes)"));
        },
        ::testing::ExitedWithCode(0), "");
}

// A process with almost every descriptor taken: NVRTC crashed (readdir of a null DIR*) when its
// opendir of the PCH folder failed with EMFILE; PCH is left out instead.
TEST(Pch, TooFewFreeDescriptorsTurnPchOffWithOneWarning) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            rlimit limit{};
            limit.rlim_cur = limit.rlim_max = 256;
            ::setrlimit(RLIMIT_NOFILE, &limit);
            std::vector<int> taken;
            for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) taken.push_back(fd);
            for (int i = 0; i < 8 && !taken.empty(); ++i) {
                ::close(taken.back());
                taken.pop_back();
            }
            std::exit(expect_pch_off_without_failing("the file descriptor limit (RLIMIT_NOFILE) '256' leaves"));
        },
        ::testing::ExitedWithCode(0), "");
}

// The PCH folders in `tmpdir` (cudacore-pch-XXXXXX).
std::set<std::string> pch_folders(const std::filesystem::path& tmpdir) {
    std::set<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(tmpdir))
        if (entry.path().filename().string().starts_with("cudacore-pch-"))
            found.insert(entry.path().filename().string());
    return found;
}

// A process (helper_pch_compile) that compiles a C++ program with automatic PCH in `tmpdir`, so
// it makes its folder there, and then waits to be killed (`stay`) or exits. Killed with its
// object unless it has ended.
class CompilingProcess {
public:
    // `delay_lock_ms`: the process runs with lock_open_delay preloaded, creating its folder's
    // lock file that much later; the constructor then returns at once (read_line() waits).
    CompilingProcess(const std::filesystem::path& tmpdir, const char* mode, const char* name,
                     int delay_lock_ms = 0) {
        int out[2];
        if (::pipe(out) != 0) return;
        const std::string helper = test::helper_path("pch_compile").string();
        const std::string shim = (test::executable_dir() / "libcudacore_lock_open_delay.so").string();
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(out[1], 1);
            ::close(out[0]);
            ::close(out[1]);
            ::setenv("TMPDIR", tmpdir.c_str(), 1);
            if (delay_lock_ms > 0) {
                ::setenv("LD_PRELOAD", shim.c_str(), 1);
                // Under ASan the preloaded shim comes before ASan's runtime, which ASan refuses
                // unless told; the shim's open() then calls ASan's.
                const char* asan = std::getenv("ASAN_OPTIONS");
                const std::string asan_options = std::string(asan ? asan : "") +
                                                 (asan && *asan ? ":" : "") + "verify_asan_link_order=0";
                ::setenv("ASAN_OPTIONS", asan_options.c_str(), 1);
                ::setenv("CUDACORE_TEST_LOCK_OPEN_DELAY_MS", std::to_string(delay_lock_ms).c_str(), 1);
            }
            ::execl(helper.c_str(), helper.c_str(), mode, name, static_cast<char*>(nullptr));
            std::_Exit(127);
        }
        ::close(out[1]);
        out_ = out[0];
        if (delay_lock_ms == 0) read_line();
    }
    // Waits for the process's line ("created\n" when it compiled with a PCH).
    void read_line() {
        char buffer[512];
        ssize_t n = 0;
        while (pid_ > 0 && out_ >= 0 && (n = ::read(out_, buffer, sizeof buffer)) > 0) {
            said_.append(buffer, static_cast<std::size_t>(n));
            if (said_.find('\n') != std::string::npos) break;
        }
        if (out_ >= 0) ::close(out_);
        out_ = -1;
    }
    ~CompilingProcess() {
        if (out_ >= 0) ::close(out_);
        if (pid_ <= 0 || ended_) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    // "created\n" when it compiled with a PCH.
    const std::string& said() const { return said_; }
    // Kills it with SIGKILL (no exit handler runs) or waits for its exit; its wait status.
    int kill() {
        ::kill(pid_, SIGKILL);
        return wait();
    }
    int wait() {
        int status = -1;
        ::waitpid(pid_, &status, 0);
        ended_ = true;
        return status;
    }

private:
    pid_t pid_ = -1;
    int out_ = -1;
    bool ended_ = false;
    std::string said_;
};

// A process killed while it holds a PCH folder cannot remove it (NVRTC's own folder would stay
// too, about 137 MB each time); the next process that makes its folder there removes it, and
// leaves the folders of processes still running alone.
TEST(Pch, FoldersOfKilledProcessesAreRemovedByTheNextProcess) {
    test::TempDir tmpdir;
    CompilingProcess killed(tmpdir.path(), "stay", "killed");
    ASSERT_EQ(killed.said(), "created\n");
    const std::set<std::string> killed_folders = pch_folders(tmpdir.path());
    ASSERT_EQ(killed_folders.size(), 1u);
    EXPECT_FALSE(std::filesystem::is_empty(tmpdir.path() / *killed_folders.begin()))
        << "no PCH was written to the folder";
    CompilingProcess running(tmpdir.path(), "stay", "running");
    ASSERT_EQ(running.said(), "created\n");
    const std::set<std::string> both = pch_folders(tmpdir.path());
    ASSERT_EQ(both.size(), 2u) << "a running process's folder was removed";
    const int status = killed.kill();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    EXPECT_EQ(pch_folders(tmpdir.path()), both) << "the folder of a killed process is left by it";

    // The next process removes the killed one's folder, not the running one's, and its own at
    // exit.
    CompilingProcess next(tmpdir.path(), "exit", "next");
    EXPECT_EQ(next.said(), "created\n");
    EXPECT_EQ(next.wait(), 0);
    std::set<std::string> left = both;
    left.erase(*killed_folders.begin());
    EXPECT_EQ(pch_folders(tmpdir.path()), left);

    running.kill();
    CompilingProcess last(tmpdir.path(), "exit", "last");
    EXPECT_EQ(last.said(), "created\n");
    EXPECT_EQ(last.wait(), 0);
    EXPECT_TRUE(std::filesystem::is_empty(tmpdir.path())) << "litter left in the temporary folder";
}

// A folder that is not a PCH folder of this user, or a symbolic link by the name, is never
// touched.
TEST(Pch, OnlyAbandonedFoldersOfTheRightFormAreRemoved) {
    test::TempDir tmpdir;
    // The form, but no lock file: a folder being made (or left by an older cudacore) is kept
    // while it is young.
    std::filesystem::create_directory(tmpdir.path() / "cudacore-pch-target");
    test::write_file(tmpdir.path() / "cudacore-pch-target" / "keep", "x");
    std::filesystem::create_directory_symlink(tmpdir.path() / "cudacore-pch-target",
                                              tmpdir.path() / "cudacore-pch-link00");
    std::filesystem::create_directory(tmpdir.path() / "cudacore-pch-toolongname");
    // Without a lock file and two days old: its owner died long ago.
    std::filesystem::create_directory(tmpdir.path() / "cudacore-pch-old000");
    test::write_file(tmpdir.path() / "cudacore-pch-old000" / "stale.pch", "x");
    std::filesystem::last_write_time(tmpdir.path() / "cudacore-pch-old000",
                                     std::filesystem::file_time_type::clock::now() -
                                         std::chrono::hours(48));
    CompilingProcess next(tmpdir.path(), "exit", "forms");
    EXPECT_EQ(next.said(), "created\n");
    EXPECT_EQ(next.wait(), 0);
    EXPECT_TRUE(std::filesystem::exists(tmpdir.path() / "cudacore-pch-target" / "keep"));
    EXPECT_TRUE(std::filesystem::is_symlink(tmpdir.path() / "cudacore-pch-link00"));
    EXPECT_TRUE(std::filesystem::exists(tmpdir.path() / "cudacore-pch-toolongname"));
    EXPECT_FALSE(std::filesystem::exists(tmpdir.path() / "cudacore-pch-old000"));
}

// A PCH folder (of either name) in `tmpdir` that holds its lock file: one being made or made.
std::optional<std::filesystem::path> folder_with_lock(const std::filesystem::path& tmpdir) {
    for (const auto& entry : std::filesystem::directory_iterator(tmpdir))
        if (entry.path().filename().string().starts_with("cudacore-pch-") &&
            std::filesystem::exists(entry.path() / "owner.lock"))
            return entry.path();
    return std::nullopt;
}

// The moment between creating a new folder's lock file and locking it, stretched to seconds
// (lock_open_delay): a process starting then reclaims abandoned folders, and must not take the
// new one for one (it did: its owner then gave NVRTC a removed --pch-dir, and NVRTC's opendir of
// it failed; readdir(NULL) crashed the process when the folder went between NVRTC's check and its
// opendir).
TEST(Pch, AFolderBeingMadeIsNeverReclaimed) {
    test::TempDir tmpdir;
    CompilingProcess making(tmpdir.path(), "stay", "making", /*delay_lock_ms=*/3000);
    std::optional<std::filesystem::path> made;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!(made = folder_with_lock(tmpdir.path())) && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(made) << "no folder with a lock file appeared";

    CompilingProcess reclaiming(tmpdir.path(), "exit", "reclaiming");  // in the stretched moment
    EXPECT_EQ(reclaiming.said(), "created\n");
    EXPECT_EQ(reclaiming.wait(), 0);
    making.read_line();
    EXPECT_EQ(making.said(), "created\n") << "the folder was removed while it was being made";
    const std::set<std::string> left = pch_folders(tmpdir.path());
    ASSERT_EQ(left.size(), 1u);
    EXPECT_TRUE(std::filesystem::exists(tmpdir.path() / *left.begin() / "owner.lock"));
    EXPECT_FALSE(left.begin()->starts_with("cudacore-pch-new-")) << *left.begin();

    const int status = making.kill();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    CompilingProcess next(tmpdir.path(), "exit", "after");
    EXPECT_EQ(next.said(), "created\n");
    EXPECT_EQ(next.wait(), 0);
    EXPECT_TRUE(std::filesystem::is_empty(tmpdir.path())) << "litter left in the temporary folder";
}

// A folder still under its private name (its maker between mkdtemp and its lock, or killed
// there) is reclaimed only once old (ten seconds); a young one is kept even with its lock free.
TEST(Pch, UnfinishedFoldersAreReclaimedOnlyWhenOld) {
    test::TempDir tmpdir;
    const std::filesystem::path young = tmpdir.path() / "cudacore-pch-new-young0";
    const std::filesystem::path old = tmpdir.path() / "cudacore-pch-new-old000";
    for (const auto& folder : {young, old}) {
        std::filesystem::create_directory(folder);
        test::write_file(folder / "owner.lock", "");
    }
    std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() -
                                              std::chrono::hours(48));
    // Young for the next minutes, however slowly the next process starts.
    std::filesystem::last_write_time(young, std::filesystem::file_time_type::clock::now() +
                                                std::chrono::minutes(5));
    CompilingProcess next(tmpdir.path(), "exit", "unfinished");
    EXPECT_EQ(next.said(), "created\n");
    EXPECT_EQ(next.wait(), 0);
    EXPECT_TRUE(std::filesystem::exists(young / "owner.lock"));
    EXPECT_FALSE(std::filesystem::exists(old));
}

// Last: it shrinks, then regrows, the process-wide PCH heap.
TEST(Pch, HeapTooSmallFailsThenGrows) {
    ProgramOptions tiny = options_for("heap");
    tiny.pch_heap_size = 4096;
    Program program(kFirst, SourceType::cxx, tiny);
    EXPECT_NO_THROW(program.compile(CodeType::ptx));
    EXPECT_EQ(program.pch_status().outcome, PchOutcome::failed);
    EXPECT_NE(program.pch_status().reason.find("NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED"),
              std::string::npos)
        << program.pch_status().reason;
    const std::size_t needed = program.pch_status().heap_size_required;
    EXPECT_GT(needed, 4096u);

    // Unset: the heap (still 4096 bytes) is grown when a compile needs more...
    ProgramOptions automatic = options_for("heap_grown");
    Program grows(kFirst, SourceType::cxx, automatic);
    grows.compile(CodeType::ptx);
    EXPECT_EQ(grows.pch_status().outcome, PchOutcome::failed);
    EXPECT_NE(grows.pch_status().reason.find("grown"), std::string::npos)
        << grows.pch_status().reason;
    // ...so the next one makes its PCH.
    Program after(kSecond, SourceType::cxx, options_for("heap_after"));
    after.compile(CodeType::ptx);
    EXPECT_EQ(after.pch_status().outcome, PchOutcome::created) << after.pch_status().reason;
}

}  // namespace
