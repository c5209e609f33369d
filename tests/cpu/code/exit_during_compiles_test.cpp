// A process that exits (exit() or a return from main) while other threads compile ends cleanly:
// NVRTC's exit-time destructors free what a compile under way uses, so the exit waits for the
// compiles under way and lets none begin (loader/compiler_calls_at_exit.hpp). Many runs, the exit
// at a different moment of the compiles each time, once each thread has compiled once.
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

}  // namespace
