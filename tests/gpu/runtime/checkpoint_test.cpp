// Checkpoint and restore on a GPU: a child process holding a pattern in device memory is locked
// (with a timeout), checkpointed, restored and unlocked, and then finds its memory intact. Where
// the driver or the machine refuses, the test shows that the error is the driver's own answer
// (the raw entry point, asked again, says the same) and reports it as the reason it skips.
#include "cudacore/checkpoint.hpp"
#include "cudacore/device.hpp"
#include "cudacore/stream.hpp"
#include "loader/driver_api.hpp"
#include "test_support.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace {

using cudacore::DriverError;
using cudacore::checkpoint::Process;
using cudacore::checkpoint::ProcessState;
using namespace std::chrono_literals;

// A helper program with pipes on its standard input and output.
class Child {
public:
    explicit Child(const std::string& program) {
        int in[2];
        int out[2];
        if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(in[0], 0);
            ::dup2(out[1], 1);
            ::close(in[0]);
            ::close(in[1]);
            ::close(out[0]);
            ::close(out[1]);
            ::execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(in[0]);
        ::close(out[1]);
        to_child_ = in[1];
        from_child_ = out[0];
    }
    ~Child() {
        if (to_child_ >= 0) ::close(to_child_);
        if (pid_ > 0 && !reaped_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        ::close(from_child_);
    }
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    pid_t pid() const { return pid_; }

    // The child's next line, or "" when it ends or says nothing within `limit`.
    std::string read_line(std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (true) {
            if (auto newline = buffered_.find('\n'); newline != std::string::npos) {
                std::string line = buffered_.substr(0, newline);
                buffered_.erase(0, newline + 1);
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            if (left.count() <= 0) return "";
            pollfd fd{from_child_, POLLIN, 0};
            if (::poll(&fd, 1, static_cast<int>(left.count())) <= 0) return "";
            char chunk[256];
            const ssize_t got = ::read(from_child_, chunk, sizeof chunk);
            if (got <= 0) return "";
            buffered_.append(chunk, static_cast<std::size_t>(got));
        }
    }
    void write_line(const std::string& line) {
        const std::string text = line + "\n";
        ASSERT_EQ(::write(to_child_, text.data(), text.size()),
                  static_cast<ssize_t>(text.size()));
    }
    // Its exit code (or minus the signal), waiting for it.
    int wait() {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }

private:
    pid_t pid_ = -1;
    int to_child_ = -1;
    int from_child_ = -1;
    bool reaped_ = false;
    std::string buffered_;
};

// The raw driver's answer for the same call on the same pid (no cudacore in between).
CUresult ask_driver_again(const std::string& call, int pid, unsigned timeout_ms) {
    const auto& api = cudacore::detail::driver();
    if (call == "cuCheckpointProcessGetState") {
        CUprocessState state{};
        return api.cuCheckpointProcessGetState(pid, &state);
    }
    if (call == "cuCheckpointProcessLock") {
        CUcheckpointLockArgs args{};
        args.timeoutMs = timeout_ms;
        return api.cuCheckpointProcessLock(pid, &args);
    }
    if (call == "cuCheckpointProcessCheckpoint") {
        CUcheckpointCheckpointArgs args{};
        return api.cuCheckpointProcessCheckpoint(pid, &args);
    }
    if (call == "cuCheckpointProcessRestore") {
        CUcheckpointRestoreArgs args{};
        return api.cuCheckpointProcessRestore(pid, &args);
    }
    if (call == "cuCheckpointProcessUnlock") {
        CUcheckpointUnlockArgs args{};
        return api.cuCheckpointProcessUnlock(pid, &args);
    }
    ADD_FAILURE() << "unexpected call " << call;
    return CUDA_SUCCESS;
}

// Whether a status means "this driver or machine does not do checkpoints (for this caller)".
bool is_refusal(CUresult status) {
    return status == CUDA_ERROR_NOT_SUPPORTED || status == CUDA_ERROR_NOT_PERMITTED;
}

TEST(CheckpointGpu, ChildMemoryIsIntactAfterLockCheckpointRestoreUnlock) {
    CUDACORE_REQUIRE_GPU();
    ASSERT_NE(cudacore::detail::driver().cuCheckpointProcessLock, nullptr)
        << "driver " << cudacore::detail::driver().driver_version
        << " has no checkpoint entry points";
    Child child(cudacore::test::helper_path("checkpoint_child").string());
    const std::string ready = child.read_line(120s);
    ASSERT_EQ(ready, "ready") << "child said: " << ready;
    const Process process(child.pid());
    const unsigned timeout_ms = 30000;
    std::string step;
    try {
        step = "state";
        EXPECT_EQ(process.state(), ProcessState::running);
        step = "lock";
        process.lock(std::chrono::milliseconds(timeout_ms));
        EXPECT_EQ(process.state(), ProcessState::locked);
        step = "checkpoint";
        process.checkpoint();
        EXPECT_EQ(process.state(), ProcessState::checkpointed);
        EXPECT_GT(process.restore_thread_id(), 0);
        step = "restore";
        process.restore();
        EXPECT_EQ(process.state(), ProcessState::locked);
        step = "unlock";
        process.unlock();
        EXPECT_EQ(process.state(), ProcessState::running);
    } catch (const DriverError& e) {
        // Not the round trip: only a refusal of the driver's is acceptable, and it must be exactly
        // what the driver answers.
        const std::string message = e.what();
        EXPECT_TRUE(is_refusal(e.status())) << step << ": " << message;
        EXPECT_NE(message.find(e.call()), std::string::npos) << message;
        EXPECT_NE(message.find(e.status_name()), std::string::npos) << message;
        EXPECT_NE(message.find("process " + std::to_string(child.pid())), std::string::npos)
            << message;
        EXPECT_EQ(message.find("not supported by this driver"), std::string::npos)
            << "the entry point exists; the refusal must be the driver's: " << message;
        EXPECT_EQ(ask_driver_again(e.call(), child.pid(), timeout_ms), e.status())
            << "the raw " << e.call() << " answers differently than: " << message;
        // Leave the child running so it can end normally.
        try {
            if (process.state() == ProcessState::locked) process.unlock();
        } catch (const DriverError&) {
        }
        child.write_line("check");
        child.wait();
        std::printf("checkpoint refused by the driver at %s: %s\n", step.c_str(), message.c_str());
        GTEST_SKIP() << "the driver refuses checkpoints here (" << step << "): " << message;
    }
    child.write_line("check");
    EXPECT_EQ(child.read_line(120s), "intact");
    EXPECT_EQ(child.wait(), 0);
}

TEST(CheckpointGpu, LockTimesOutOrLocksAndUnlocks) {
    CUDACORE_REQUIRE_GPU();
    Child child(cudacore::test::helper_path("checkpoint_child").string());
    ASSERT_EQ(child.read_line(120s), "ready");
    const Process process(child.pid());
    try {
        process.lock(1ms);  // either done within 1 ms, or the driver's timeout status
        EXPECT_EQ(process.state(), ProcessState::locked);
        process.unlock();
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuCheckpointProcessLock");
        EXPECT_NE(std::string(e.what()).find("timeout 1 ms"), std::string::npos) << e.what();
        // Left RUNNING after a timeout (or refused outright).
        if (!is_refusal(e.status())) {
            EXPECT_EQ(process.state(), ProcessState::running);
        }
    }
    child.write_line("check");
    EXPECT_EQ(child.read_line(120s), "intact");
    EXPECT_EQ(child.wait(), 0);
}

TEST(CheckpointGpu, CallingProcessReportsItsState) {
    CUDACORE_REQUIRE_GPU();
    const cudacore::Device device(0);
    const cudacore::Stream stream = device.create_stream();  // this process is a CUDA process
    try {
        EXPECT_EQ(Process::current().state(), ProcessState::running);
    } catch (const DriverError& e) {
        EXPECT_TRUE(is_refusal(e.status())) << e.what();
        EXPECT_NE(std::string(e.what()).find("(the calling process)"), std::string::npos)
            << e.what();
        GTEST_SKIP() << "the driver refuses checkpoint state here: " << e.what();
    }
}

TEST(CheckpointGpu, NonCudaProcessIsADriverErrorNamingThePid) {
    CUDACORE_REQUIRE_GPU();
    const pid_t sleeper = cudacore::test::spawn({"/bin/sleep", "30"});
    try {
        Process(sleeper).state();
        ADD_FAILURE() << "a process without CUDA has a checkpoint state";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuCheckpointProcessGetState");
        EXPECT_NE(std::string(e.what()).find("process " + std::to_string(sleeper)),
                  std::string::npos)
            << e.what();
    }
    ::kill(sleeper, SIGKILL);
    cudacore::test::wait_for(sleeper);
}

TEST(CheckpointGpu, DriverWithoutTheEntryPointsSaysNotSupportedByThisDriver) {
    CUDACORE_REQUIRE_GPU();
    // A driver table like this one but without the checkpoint calls, as an older driver has.
    const cudacore::detail::DriverApi* real = &cudacore::detail::driver();
    cudacore::detail::DriverApi older = *real;
    older.cuCheckpointProcessGetState = nullptr;
    older.cuCheckpointProcessGetRestoreThreadId = nullptr;
    older.cuCheckpointProcessLock = nullptr;
    older.cuCheckpointProcessCheckpoint = nullptr;
    older.cuCheckpointProcessRestore = nullptr;
    older.cuCheckpointProcessUnlock = nullptr;
    cudacore::detail::loaded_driver.store(&older);
    const Process self = Process::current();
    const std::pair<const char*, std::function<void()>> calls[] = {
        {"cuCheckpointProcessGetState", [&] { self.state(); }},
        {"cuCheckpointProcessGetRestoreThreadId", [&] { self.restore_thread_id(); }},
        {"cuCheckpointProcessLock", [&] { self.lock(); }},
        {"cuCheckpointProcessCheckpoint", [&] { self.checkpoint(); }},
        {"cuCheckpointProcessRestore", [&] { self.restore(); }},
        {"cuCheckpointProcessUnlock", [&] { self.unlock(); }},
    };
    for (const auto& [call, run] : calls) {
        try {
            run();
            ADD_FAILURE() << call << " ran without its entry point";
        } catch (const DriverError& e) {
            EXPECT_EQ(e.status(), CUDA_ERROR_NOT_SUPPORTED);
            EXPECT_EQ(e.call(), call);
            EXPECT_NE(std::string(e.what()).find("not supported by this driver"),
                      std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("has no " + std::string(call)),
                      std::string::npos)
                << e.what();
        }
    }
    cudacore::detail::loaded_driver.store(real);
}

}  // namespace
