// The teardown torture program in its CPU form (--cpu): the code layer's objects and the paths
// that need no driver, made and dropped in random orders, on other threads, after main returns
// and through exit(). Each seed runs in its own process and must exit 0, print nothing on stderr
// and say how it ended. (On a GPU machine, scripts/gpu-check.sh torture runs the GPU form.)
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using cudacore::test::helper_path;
using cudacore::test::run_process;

TEST(TeardownTorture, CpuSeedsExitCleanly) {
    int exits = 0, returns = 0;
    for (int seed = 1; seed <= 24; ++seed) {
        auto result = run_process({helper_path("teardown_torture").string(), std::to_string(seed), "--cpu"});
        ASSERT_EQ(result.exit_code, 0) << "seed " << seed << "\n" << result.out << result.err;
        EXPECT_EQ(result.err, "") << "seed " << seed;
        EXPECT_NE(result.out.find("seed " + std::to_string(seed) + ", cpu"), std::string::npos);
        if (result.out.find("exit(): ") != std::string::npos) ++exits;
        if (result.out.find("return from main: ") != std::string::npos) ++returns;
    }
    // Both endings were taken.
    EXPECT_GT(exits, 0);
    EXPECT_GT(returns, 0);
}

// A seed is reproducible: the same choices, printed the same way.
TEST(TeardownTorture, SeedIsReproducible) {
    const std::string torture = helper_path("teardown_torture").string();
    auto first = run_process({torture, "77", "--cpu"});
    auto second = run_process({torture, "77", "--cpu"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    // Drops on other threads may print in either order; the set of lines is the same.
    auto lines = [](const std::string& text) {
        std::multiset<std::string> set;
        std::size_t start = 0;
        for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
            set.insert(text.substr(start, end - start));
        return set;
    };
    EXPECT_EQ(lines(first.out), lines(second.out));
    EXPECT_GT(lines(first.out).size(), 5u);
}

}  // namespace
