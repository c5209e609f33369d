// A process that exits (exit() or a return from main) while other threads compile ends cleanly:
// NVRTC's exit-time destructors free what a compile under way uses, so the exit waits for the
// compiles under way and lets none begin (loader/compiler_calls_at_exit.hpp). Many runs, the exit
// at a different moment of the compiles each time, once each thread has compiled once, and
// during the first milliseconds.
#include "test_support.hpp"

#include <random>
#include <string>

namespace {

TEST(ExitDuringCompiles, TheProcessEndsCleanlyWhateverTheCompilesAreDoing) {
    std::mt19937 random(20261129u);
    int runs = 0;
    for (const char* how : {"exit", "return"}) {
        for (int round = 0; round < 12; ++round) {
            const int delay = static_cast<int>(random() % 1500);
            const cudacore::test::ProcessResult result = cudacore::test::run_process(
                {cudacore::test::helper_path("exit_during_compiles").string(), std::to_string(delay), how}, {},
                {.timeout_seconds = 180});
            EXPECT_EQ(result.exit_code, 0) << how << " after " << delay << " ms: " << result.out << result.err;
            EXPECT_EQ(result.out, "ending\n") << how << " after " << delay << " ms";
            ++runs;
        }
    }
    EXPECT_EQ(runs, 24);
}

// The same within the first milliseconds, while one thread opens NVRTC (its initialisation
// registers thousands of destructors) and the first compiles run: an exit then ran NVRTC's
// destructors under its initialisation (a crash, or a hang in the dynamic loader).
TEST(ExitDuringCompiles, AnExitWhileNvrtcIsOpenedEndsCleanly) {
    std::mt19937 random(20261130u);
    int runs = 0;
    for (const char* how : {"exit", "return"}) {
        for (int round = 0; round < 20; ++round) {
            const int delay = static_cast<int>(random() % 30);
            const cudacore::test::ProcessResult result = cudacore::test::run_process(
                {cudacore::test::helper_path("exit_during_compiles").string(), std::to_string(delay), how, "early"}, {},
                {.timeout_seconds = 120});
            EXPECT_EQ(result.exit_code, 0) << how << " after " << delay << " ms: " << result.out << result.err;
            EXPECT_EQ(result.out, "ending\n") << how << " after " << delay << " ms";
            ++runs;
        }
    }
    EXPECT_EQ(runs, 40);
}

}  // namespace
