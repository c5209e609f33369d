// A process that exits (exit() or a return from main) while other threads compile ends cleanly:
// NVRTC's exit-time destructors free what a compile under way uses, so the exit waits for the
// compiles under way and lets none begin (loader/compiler_calls_at_exit.hpp). Many runs, the exit
// at a different moment of the compiles each time, once each thread has compiled once, and
// during the first milliseconds.
#include "test_support.hpp"

#include <random>
#include <string>
#include <vector>

namespace {

// Runs the helper `rounds` times with exit() and as many with a return from main, each after a
// random delay below `max_delay_ms` (counted from the start with `early`, else from each thread's
// first compile); each must end with 0, having printed its line. Returns the runs.
int clean_exits(unsigned seed, int rounds, int max_delay_ms, bool early) {
    std::mt19937 random(seed);
    int runs = 0;
    for (const char* how : {"exit", "return"}) {
        for (int round = 0; round < rounds; ++round) {
            const int delay = static_cast<int>(random() % static_cast<unsigned>(max_delay_ms));
            std::vector<std::string> argv{cudacore::test::helper_path("exit_during_compiles").string(),
                                          std::to_string(delay), how};
            if (early) argv.emplace_back("early");
            const cudacore::test::ProcessResult result = cudacore::test::run_process(argv, {}, {.timeout_seconds = 180});
            EXPECT_EQ(result.exit_code, 0) << how << " after " << delay << " ms: " << result.out << result.err;
            EXPECT_EQ(result.out, "ending\n") << how << " after " << delay << " ms";
            ++runs;
        }
    }
    return runs;
}

TEST(ExitDuringCompiles, TheProcessEndsCleanlyWhateverTheCompilesAreDoing) {
    EXPECT_EQ(clean_exits(20261129u, 12, 1500, false), 24);
}

// The same within the first milliseconds, while one thread opens NVRTC (its initialisation
// registers thousands of destructors) and the first compiles run: an exit then ran NVRTC's
// destructors under its initialisation (a crash, or a hang in the dynamic loader).
TEST(ExitDuringCompiles, AnExitWhileNvrtcIsOpenedEndsCleanly) {
    EXPECT_EQ(clean_exits(20261130u, 20, 30, true), 40);
}

}  // namespace
