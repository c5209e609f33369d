// cudacore opens NVRTC for the first time while another part of the program, through its own
// dlopen of the same NVRTC, is inside NVRTC's first compile (which puts NVRTC's handlers on
// SIGINT and SIGTERM and SIG_IGN on SIGXFSZ, then puts back what it saved): afterwards every
// signal has the program's disposition again, and SIGTERM runs the program's handler or its
// default action, never NVRTC's exit(4). cudacore's open comes at many moments relative to that
// compile, before, inside and after its window, each in a fresh process
// (helper_nvrtc_open_race_probe).
#include "loader/compiler_apis.hpp"
#include "signal_test_process.hpp"
#include "test_support.hpp"

#include <signal.h>

#include <string>
#include <vector>

namespace {

struct Outcome {
    int status = 0;  // exit status, or minus the signal that ended it
    std::string output;
};

Outcome run_probe(const std::string& nvrtc_path, const std::string& mode, const std::string& when) {
    auto process = cudacore::test::start_signal_test_process(
        {cudacore::test::helper_path("nvrtc_open_race_probe").string(), nvrtc_path, mode, when}, {}, "");
    EXPECT_GT(process.pid, 0);
    if (process.pid <= 0) return {};
    Outcome outcome;
    outcome.status = cudacore::test::finish_signal_test_process(process, &outcome.output);
    return outcome;
}

// Moments of cudacore's open: before the other compile; in microseconds after it began, inside
// NVRTC's window (its handlers go in about a millisecond in, and the window lasts tens of
// milliseconds) and after it; then "window", once NVRTC's handler is seen in force.
std::vector<std::string> moments() {
    std::vector<std::string> when = {"before"};
    for (const int microseconds : {0, 100, 300, 600, 1000, 1500, 2000, 3000, 5000, 8000, 12000, 20000,
                                   30000, 50000, 80000, 150000, 300000})
        when.push_back(std::to_string(microseconds));
    for (int i = 0; i < 8; ++i) when.push_back("window");
    return when;
}

void expect_program_dispositions(const std::string& mode) {
    std::string nvrtc_path;
    try {
        nvrtc_path = cudacore::detail::nvrtc().path;
    } catch (const std::exception& error) {
        GTEST_SKIP() << "NVRTC is not available: " << error.what();
    }
    const bool handler = mode == "handler";
    for (const std::string& when : moments()) {
        const Outcome outcome = run_probe(nvrtc_path, mode, when);
        SCOPED_TRACE("cudacore opened NVRTC at " + when + ", SIGTERM's disposition: " + mode +
                     "\n" + outcome.output);
        EXPECT_NE(outcome.output.find("compile: ok"), std::string::npos);
        EXPECT_NE(outcome.output.find("SIGINT: default"), std::string::npos);
        EXPECT_NE(outcome.output.find(handler ? "SIGTERM: program" : "SIGTERM: default"), std::string::npos);
        EXPECT_NE(outcome.output.find("SIGXFSZ: default"), std::string::npos);
        EXPECT_EQ(outcome.status, handler ? 42 : -SIGTERM) << "4 is NVRTC's handler";
        EXPECT_EQ(outcome.output.find("survived"), std::string::npos);
    }
}

TEST(NvrtcOpenRace, SigtermRunsTheProgramsHandlerWhereverTheOtherCompileWas) {
    expect_program_dispositions("handler");
}

TEST(NvrtcOpenRace, SigtermEndsTheProcessWhereverTheOtherCompileWas) {
    expect_program_dispositions("default");
}

}  // namespace
