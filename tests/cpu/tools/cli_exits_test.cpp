// How the CLI ends: a compile taken by SIGTERM, SIGINT, SIGHUP, SIGALRM or SIGUSR1 during NVRTC ends by that
// signal (143, 130, 129 to a shell) with no output and no temporary file left, whether its
// output goes to a pipe, a file or through `timeout`; `cudacore link` bounds its worker
// (--worker-timeout) and says so; a worker dies with the CLI when the CLI is killed (SIGKILL),
// in a loop and many at once; a process or descriptor limit is named as such.
#include "signal_test_process.hpp"
#include "test_support.hpp"

#include <cstdlib>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using cudacore::test::cli_path;
using cudacore::test::finish_signal_test_process;
using cudacore::test::helper_path;
using cudacore::test::run_process;
using cudacore::test::start_signal_test_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

// Long enough in NVRTC (a second or more here) to be signalled during the compile.
constexpr const char* kSlowKernel = R"(#include <cuda/std/tuple>
#include <cuda/std/array>
#include <cuda/std/functional>
template <int N> struct F { __device__ static int v(int x) { return F<N - 1>::v(x) * 3 + N; } };
template <> struct F<0> { __device__ static int v(int x) { return x; } };
extern "C" __global__ void k(int* p) { cuda::std::array<int, 4> a{}; p[threadIdx.x] = F<90>::v(a[0]); }
)";

constexpr const char* kKernel = "extern \"C\" __global__ void fill(int* p) { p[threadIdx.x] = 7; }\n";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Names in `dir` that start with `prefix` (empty: all).
std::vector<std::string> names_in(const fs::path& dir, const std::string& prefix = {}) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(prefix)) names.push_back(name);
    }
    return names;
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += name + " ";
    return out;
}

// Says when NVRTC opens `name` in `folder` (a header the compile includes): then the compile is
// in NVRTC. inotify sees the open itself, whatever process (the CLI, or the CLI under `timeout`)
// and whichever thread makes it.
class HeaderOpenWatch {
public:
    HeaderOpenWatch(const fs::path& folder, std::string name)
        : fd_(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK)), name_(std::move(name)) {
        if (fd_ >= 0 && ::inotify_add_watch(fd_, folder.c_str(), IN_OPEN) < 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~HeaderOpenWatch() {
        if (fd_ >= 0) ::close(fd_);
    }
    HeaderOpenWatch(const HeaderOpenWatch&) = delete;
    HeaderOpenWatch& operator=(const HeaderOpenWatch&) = delete;

    // Whether the header was opened `times` times within `limit`.
    bool wait(int times, std::chrono::milliseconds limit) const {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        alignas(inotify_event) char buffer[4096];
        for (auto left = limit; fd_ >= 0 && left.count() > 0;
             left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())) {
            pollfd ready{fd_, POLLIN, 0};
            if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
            const ssize_t n = ::read(fd_, buffer, sizeof buffer);
            for (ssize_t at = 0; at < n;) {
                const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
                if (event->len > 0 && name_ == event->name && --times == 0) return true;
                at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            }
        }
        return false;
    }

private:
    int fd_;
    std::string name_;
};

enum class Output { pipe, file, under_timeout };
const char* to_string(Output output) {
    return output == Output::pipe ? "pipe" : output == Output::file ? "file" : "timeout";
}

struct CliExits : ::testing::Test {
    TempDir dir;
    fs::path tmp = dir.path() / "tmp";
    fs::path out_dir = dir.path() / "out";
    fs::path cache = dir.path() / "cache";
    void SetUp() override {
        fs::create_directories(tmp);
        fs::create_directories(out_dir);
        // The first line includes gate.h by its absolute path: its opening says NVRTC runs.
        write_file(dir.path() / "gate.h", "// opened by NVRTC\n");
        write_file(dir.path() / "slow.cu", "#include \"" + (dir.path() / "gate.h").string() + "\"\n" + kSlowKernel);
        write_file(dir.path() / "k.cu", kKernel);
    }
    std::map<std::string, std::string> env() const {
        return {{"TMPDIR", tmp.string()}, {"CUDACORE_CACHE_DIR", cache.string()},
                {"CUDACORE_DISABLE_CACHE", ""}};
    }

    // Compiles slow.cu (through the cache, so a header trace folder is made in TMPDIR), sends
    // `signal` once the compile is in NVRTC (gate.h opened) and the trace folder is made, and
    // returns how it ended.
    int compile_and_signal(int signal, Output output, std::string* printed) {
        std::vector<std::string> argv{cli_path().string(), "compile", (dir.path() / "slow.cu").string(),
                                      "-o", (out_dir / "slow.cubin").string(), "--arch", "sm_90"};
        if (output == Output::under_timeout) argv.insert(argv.begin(), {"/usr/bin/timeout", "300"});
        // What an earlier run left (the trace and PCH folders, until their owners register
        // them) must not be taken for this run's.
        for (const fs::path& folder : {tmp, out_dir}) {
            fs::remove_all(folder);
            fs::create_directories(folder);
        }
        const fs::path log = dir.path() / "log";
        const HeaderOpenWatch gate_opened(dir.path(), "gate.h");
        // In a process group of its own, as a shell starts a job: `timeout` signals its group.
        auto process = start_signal_test_process(argv, env(), output == Output::file ? log.string() : "",
                                                 /*own_process_group=*/true);
        EXPECT_GT(process.pid, 0);
        if (process.pid <= 0) return 0;
        // The cached compile reads gate.h once, then NVRTC compiles from memory (and the check
        // compile in the compile worker) for seconds: the signal comes while NVRTC runs.
        const bool reached = gate_opened.wait(1, std::chrono::seconds(60));
        EXPECT_TRUE(reached) << "the compile never read its headers";
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(process.pid, signal);
        const int ended = finish_signal_test_process(process, printed);
        if (output == Output::file) *printed = cudacore::test::read_file(log);
        return ended;
    }
};

// The promise of the shell: a process a signal ended reports that signal (the shell shows
// 128 + its number), and leaves neither its output nor a temporary file of it.
TEST_F(CliExits, ACompileSignalledInNvrtcEndsByThatSignal) {
    int runs = 0;
    for (const Output output : {Output::pipe, Output::file, Output::under_timeout}) {
        // (`timeout` takes a SIGALRM sent to it for its own timer's: only the three it passes on.)
        const std::vector<int> signals = output == Output::under_timeout
                                             ? std::vector<int>{SIGTERM, SIGINT, SIGHUP}
                                             : std::vector<int>{SIGTERM, SIGINT, SIGHUP, SIGALRM, SIGUSR1};
        for (const int signal : signals) {
            fs::remove_all(cache);
            std::string printed;
            const int ended = compile_and_signal(signal, output, &printed);
            // `timeout` passes on how its child ended: by re-raising the signal, or (when it
            // cannot) by exiting with 128 + its number; an exit of the CLI's own (NVRTC's
            // exit(4)) would come through as that status.
            const bool by_signal = ended == -signal || (output == Output::under_timeout && ended == 128 + signal);
            EXPECT_TRUE(by_signal) << strsignal(signal) << ", output to " << to_string(output)
                                   << ": ended " << ended << ": " << printed;
            EXPECT_TRUE(names_in(out_dir).empty()) << joined(names_in(out_dir));
            // No temporary of the cache's own (atomic writes register theirs).
            std::error_code no_cache;
            for (const auto& entry : fs::recursive_directory_iterator(cache, no_cache)) {
                EXPECT_FALSE(contains(entry.path().filename().string(), ".tmp-")) << entry.path();
            }
            ++runs;
        }
    }
    EXPECT_EQ(runs, 13);
}

// Nothing at all is left in TMPDIR: the header trace folder and the PCH folder are registered
// for removal when the CLI is ended by a signal.
TEST_F(CliExits, ACompileSignalledInNvrtcLeavesNothingInTmpdir) {
    for (const int signal : {SIGTERM, SIGINT}) {
        std::string printed;
        EXPECT_EQ(compile_and_signal(signal, Output::pipe, &printed), -signal) << printed;
        EXPECT_TRUE(names_in(tmp).empty()) << joined(names_in(tmp));
    }
}

struct LinkInputs : CliExits {
    fs::path ltoir = dir.path() / "k.ltoir";
    void SetUp() override {
        CliExits::SetUp();
        const auto made = run_process({cli_path().string(), "compile", (dir.path() / "k.cu").string(),
                                       "-o", ltoir.string(), "--arch", "sm_90", "--target", "ltoir",
                                       "--no-cache"},
                                      env(), {.timeout_seconds = 120});
        ASSERT_EQ(made.exit_code, 0) << made.err;
    }
    std::vector<std::string> link_argv(const std::string& output) const {
        return {cli_path().string(), "link", ltoir.string(), "--lto", "--arch", "sm_90", "-o", output};
    }
};

// A worker that stops (SIGSTOP) or loops is killed at --worker-timeout, and the CLI says so and
// writes nothing.
TEST_F(LinkInputs, AStoppedOrLoopingWorkerIsKilledAtTheBound) {
    const fs::path stops = dir.path() / "stops.sh";
    const fs::path loops = dir.path() / "loops.sh";
    write_file(stops, "#!/bin/sh\nkill -STOP $$\n");
    write_file(loops, "#!/bin/sh\nwhile :; do :; done\n");
    fs::permissions(stops, fs::perms::owner_all);
    fs::permissions(loops, fs::perms::owner_all);
    for (const fs::path& worker : {stops, loops}) {
        auto environment = env();
        environment["CUDACORE_LINK_WORKER"] = worker.string();
        std::vector<std::string> argv = link_argv((out_dir / "k.cubin").string());
        argv.insert(argv.end(), {"--worker-timeout", "1"});
        const auto start = std::chrono::steady_clock::now();
        const auto result = run_process(argv, environment, {.timeout_seconds = 60});
        const auto took = std::chrono::steady_clock::now() - start;
        EXPECT_EQ(result.exit_code, 1) << worker << ": " << result.err;
        EXPECT_TRUE(contains(result.err, "killed after the time limit of 1000 ms")) << result.err;
        EXPECT_TRUE(contains(result.err, "longer than --worker-timeout (1 s)")) << result.err;
        EXPECT_LT(took, std::chrono::seconds(30));
        EXPECT_FALSE(fs::exists(out_dir / "k.cubin"));
    }
    // The default bound is on, and 0 turns it off (asked of the help, not waited for).
    const auto help = run_process({cli_path().string(), "link", "--help"});
    EXPECT_TRUE(contains(help.out, "--worker-timeout UINT=600")) << help.out;
}

// This process adopts orphans (PR_SET_CHILD_SUBREAPER) so that it can tell how a worker whose
// parent died ended, instead of losing sight of it.
struct Subreaper {
    Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
    ~Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

std::vector<pid_t> pids_in(const fs::path& file) {
    std::vector<pid_t> pids;
    std::ifstream in(file);
    for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
    return pids;
}

// A CLI killed with SIGKILL while its worker runs leaves no worker: 40 rounds of 4 CLIs at once.
TEST_F(LinkInputs, ACliKilledWithSigkillLeavesNoWorker) {
    const Subreaper subreaper;
    int killed_workers = 0;
    constexpr int kRounds = 40, kAtOnce = 4;
    for (int round = 0; round < kRounds; ++round) {
        const fs::path pid_file = dir.path() / ("workers-" + std::to_string(round));
        auto environment = env();
        environment["CUDACORE_LINK_WORKER"] = helper_path("stalling_link_worker").string();
        environment["CUDACORE_TEST_WORKER_PIDS"] = pid_file.string();
        std::vector<cudacore::test::SignalTestProcess> clis;
        for (int i = 0; i < kAtOnce; ++i) {
            clis.push_back(start_signal_test_process(
                link_argv((out_dir / ("k" + std::to_string(i) + ".cubin")).string()), environment,
                (dir.path() / "log").string()));
            ASSERT_GT(clis.back().pid, 0);
        }
        ASSERT_TRUE(cudacore::test::wait_until([&] { return pids_in(pid_file).size() == kAtOnce; },
                                               std::chrono::seconds(60)))
            << "workers started: " << pids_in(pid_file).size();
        for (auto& cli : clis) ::kill(cli.pid, SIGKILL);
        for (auto& cli : clis) EXPECT_EQ(finish_signal_test_process(cli), -SIGKILL);
        for (const pid_t worker : pids_in(pid_file)) {
            const int ended = cudacore::test::wait_for_child(worker, std::chrono::seconds(10));
            EXPECT_EQ(ended, -SIGKILL) << "worker " << worker << " (-2000: still running)";
            if (ended == -2000) ::kill(worker, SIGKILL), cudacore::test::wait_for_child(worker, std::chrono::seconds(10));
            if (ended == -SIGKILL) ++killed_workers;
        }
    }
    EXPECT_EQ(killed_workers, kRounds * kAtOnce);
}

// The real worker program dies with its parent too, also when the parent is gone before the
// worker asked (the getppid check): started by a parent that is killed at once, 200 times, it
// is either killed by SIGKILL or exits 1, and never stays.
TEST(LinkWorker, DiesWithItsParentEvenWhenTheParentIsGoneFirst) {
    const Subreaper subreaper;
    const fs::path worker = cudacore::test::executable_dir().parent_path() / "cudacore-link-worker";
    ASSERT_TRUE(fs::exists(worker)) << worker;
    int killed = 0, exited = 0;
    for (int round = 0; round < 200; ++round) {
        int report[2];
        ASSERT_EQ(::pipe(report), 0);
        const pid_t parent = ::fork();
        ASSERT_GE(parent, 0);
        if (parent == 0) {
            // The worker waits on its standard input, a pipe kept open by this process.
            int input[2];
            if (::pipe(input) != 0) ::_exit(2);
            const std::string variable = "CUDACORE_PARENT_PID=" + std::to_string(::getpid());
            // The library path too: a build moved to another machine finds libcudacore through it.
            const char* library_path = std::getenv("LD_LIBRARY_PATH");
            const std::string libraries = std::string("LD_LIBRARY_PATH=") + (library_path ? library_path : "");
            char* envp[] = {const_cast<char*>(variable.c_str()), const_cast<char*>(libraries.c_str()), nullptr};
            char* argv[] = {const_cast<char*>(worker.c_str()), nullptr};
            posix_spawn_file_actions_t actions;
            posix_spawn_file_actions_init(&actions);
            posix_spawn_file_actions_adddup2(&actions, input[0], 0);
            pid_t child = 0;
            if (::posix_spawn(&child, worker.c_str(), &actions, nullptr, argv, envp) != 0) ::_exit(3);
            (void)!::write(report[1], &child, sizeof child);
            if (round % 2 == 0) ::_exit(0);  // gone before the worker asked, most likely
            for (;;) ::pause();
        }
        ::close(report[1]);
        pid_t child = 0;
        ASSERT_EQ(::read(report[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
        ::close(report[0]);
        if (round % 2 == 1) {
            std::this_thread::sleep_for(std::chrono::milliseconds(round % 7));
            ::kill(parent, SIGKILL);
        }
        cudacore::test::wait_for_child(parent, std::chrono::seconds(10));
        const int ended = cudacore::test::wait_for_child(child, std::chrono::seconds(10));
        if (ended == -SIGKILL) ++killed;
        else if (ended == 1) ++exited;
        else {
            ADD_FAILURE() << "worker " << child << " ended " << ended << " (-2000: still running)";
            ::kill(child, SIGKILL);
            cudacore::test::wait_for_child(child, std::chrono::seconds(10));
        }
    }
    EXPECT_EQ(killed + exited, 200) << killed << " killed, " << exited << " exited";
}

// `ulimit -n 12`: the worker was found; the descriptor limit is the problem, and the message
// says so (the call, EMFILE and its text, the limit and its value), not "set CUDACORE_LINK_WORKER".
TEST_F(LinkInputs, ADescriptorLimitIsNamed) {
    std::string command = "ulimit -n 12 && exec";
    for (const auto& arg : link_argv((out_dir / "k.cubin").string())) command += " '" + arg + "'";
    const auto result = run_process({"/bin/sh", "-c", command}, env(), {.timeout_seconds = 60});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "EMFILE")) << result.err;
    EXPECT_TRUE(contains(result.err, "Too many open files")) << result.err;
    EXPECT_TRUE(contains(result.err, "RLIMIT_NOFILE, ulimit -n: 12")) << result.err;
    EXPECT_TRUE(contains(result.err, "cudacore-link-worker' could not be started")) << result.err;
    EXPECT_FALSE(contains(result.err, "CUDACORE_LINK_WORKER")) << result.err;
    EXPECT_FALSE(fs::exists(out_dir / "k.cubin"));
}

// `ulimit -u 1`: the same for the process limit. Root ignores RLIMIT_NPROC, so as root the CLI
// runs as the user nobody (setpriv); without setpriv the test cannot be set up and skips.
TEST_F(LinkInputs, AProcessLimitIsNamed) {
    std::vector<std::string> argv;
    if (::geteuid() == 0) {
        if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "root without setpriv: RLIMIT_NPROC cannot apply";
        argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
        fs::permissions(dir.path(), fs::perms::all);
        fs::permissions(out_dir, fs::perms::all);
        fs::permissions(ltoir, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    }
    std::string command = "ulimit -u 1 && exec";
    for (const auto& arg : link_argv((out_dir / "k.cubin").string())) command += " '" + arg + "'";
    argv.insert(argv.end(), {"/bin/bash", "-c", command});  // dash has no ulimit -u
    auto environment = env();
    environment["TMPDIR"] = "/tmp";
    const auto result = run_process(argv, environment, {.timeout_seconds = 60});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(contains(result.err, "posix_spawn failed: EAGAIN")) << result.err;
    EXPECT_TRUE(contains(result.err, "RLIMIT_NPROC, ulimit -u: 1")) << result.err;
    EXPECT_FALSE(contains(result.err, "CUDACORE_LINK_WORKER")) << result.err;
    EXPECT_FALSE(fs::exists(out_dir / "k.cubin"));
}

}  // namespace
