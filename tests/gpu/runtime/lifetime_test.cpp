// Lifetime at exit and in odd orders: each scenario runs in a child process that must exit 0 and
// print nothing on stderr.
#include "test_support.hpp"

namespace {

using cudacore::test::helper_path;
using cudacore::test::run_process;

void expect_clean_exit(const std::string& scenario) {
    auto result = run_process({helper_path("lifetime_scenarios").string(), scenario});
    EXPECT_EQ(result.exit_code, 0) << scenario << "\nstdout:\n" << result.out << "\nstderr:\n" << result.err;
    EXPECT_EQ(result.err, "") << scenario;
    EXPECT_NE(result.out.find("scenario " + scenario + " done"), std::string::npos) << result.out;
}

TEST(LifetimeGpu, StaticObjectsExitCleanly) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("static");
}

TEST(LifetimeGpu, ReverseOrderDestruction) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reverse");
}

TEST(LifetimeGpu, RandomOrderDestruction) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("random");
}

TEST(LifetimeGpu, DestroyAfterDeviceResetBySomeoneElse) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reset");
}

// Events the context kept for reuse die with it: events made after the reset are fresh ones.
TEST(LifetimeGpu, KeptEventsAreNotHandedOutAfterADeviceResetBySomeoneElse) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("reset-kept-events");
}

TEST(LifetimeGpu, ObjectsOutliveMainThroughQuickExitPaths) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("exit");
}

// A launched ObjectCode and Kernel held in statics, one destroyed inside exit() while the
// deferred-unload thread still runs, one after it stopped.
TEST(LifetimeGpu, LaunchedKernelsHeldInStaticsExitCleanly) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("static-kernel");
}

// std::exit while a kernel runs whose code's last handles were just dropped: exit waits for the
// unload in progress (which waits for the kernel) rather than shutting the driver down under it.
TEST(LifetimeGpu, ExitWhileAKernelRunsWaitsForTheUnloadInProgress) {
    CUDACORE_REQUIRE_GPU();
    const std::string scenario = "exit-while-kernel-runs";
    auto result = run_process({helper_path("lifetime_scenarios").string(), scenario});
    EXPECT_EQ(result.exit_code, 0) << "stdout:\n" << result.out << "\nstderr:\n" << result.err;
    EXPECT_EQ(result.err, "");
    EXPECT_NE(result.out.find("scenario " + scenario + " done"), std::string::npos) << result.out;
    // The kernel was still running when exit() began, and the unload that was in progress then
    // had finished when the handlers registered before it ran: one load, one unload.
    EXPECT_NE(result.out.find("kernel running: yes"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("at exit: 1 loads, 1 unloads"), std::string::npos) << result.out;
}

}  // namespace
