// A signal that arrives while threads compile does what it does at any other moment: SIGTERM
// sent while four threads compile a <cuda/std> kernel runs the program's handler, and again the
// handler the program put in its place during the compiles, and the program goes on with its
// compiles and its handler as it set it (flags and mask); an ignored SIGTERM stays ignored; with no handler, SIGTERM ends the process at
// once. NVRTC must neither run a handler of its own (which calls exit(4)) nor change the
// handlers. Each case runs the program in a child process (helper_compile_signal_probe).
#include "signal_test_process.hpp"
#include "test_support.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace {

using cudacore::test::TempDir;

// A run compiles four kernels one after another in NVRTC's front end: seconds here. A hang
// (NVRTC's exit(4) waiting on its own lock) is killed after this and reported.
constexpr std::chrono::seconds kBound{120};

struct Outcome {
    int status = 0;  // exit status, or minus the signal that ended it
    std::string output;
};

Outcome run_probe(const std::string& mode) {
    TempDir dir;
    auto process = cudacore::test::start_signal_test_process(
        {cudacore::test::helper_path("compile_signal_probe").string(), mode, dir.path().string()}, {},
        "");
    EXPECT_GT(process.pid, 0);
    if (process.pid <= 0) return {};
    // The pipe reaches its end when the child ends; a child still running at the bound hangs.
    Outcome outcome;
    pollfd end{process.output, POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ::kill(process.pid, SIGKILL);
            outcome.output = "hung: killed after " + std::to_string(kBound.count()) + " s\n";
            break;
        }
        if (::poll(&end, 1, static_cast<int>(left.count())) <= 0) continue;
        char buffer[4096];
        const ssize_t n = ::read(process.output, buffer, sizeof buffer);
        if (n == 0) break;
        if (n > 0) outcome.output.append(buffer, static_cast<std::size_t>(n));
    }
    std::string rest;
    outcome.status = cudacore::test::finish_signal_test_process(process, &rest);
    outcome.output += rest;
    return outcome;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

void expect_all_compiled(const Outcome& outcome) {
    for (int i = 0; i < 4; ++i)
        EXPECT_TRUE(contains(outcome.output, "compile " + std::to_string(i) + ": ptx\n")) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "finished before the signals: 0\n")) << outcome.output;
}

TEST(CompileSignals, TheProgramsHandlerRunsAndTheProgramGoesOn) {
    const Outcome outcome = run_probe("handler");
    EXPECT_EQ(outcome.status, 0) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "first handler ran 1 times, second 1 times\n")) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "second handler still installed with its flags and mask: yes\n"))
        << outcome.output;
    expect_all_compiled(outcome);
}

TEST(CompileSignals, AnIgnoredSignalStaysIgnored) {
    const Outcome outcome = run_probe("ignore");
    EXPECT_EQ(outcome.status, 0) << outcome.output;
    EXPECT_TRUE(contains(outcome.output, "still ignored: yes\n")) << outcome.output;
    expect_all_compiled(outcome);
}

TEST(CompileSignals, WithNoHandlerTheSignalEndsTheProcess) {
    const Outcome outcome = run_probe("default");
    EXPECT_EQ(outcome.status, -SIGTERM) << outcome.output;
    EXPECT_FALSE(contains(outcome.output, "survived")) << outcome.output;
}

}  // namespace
