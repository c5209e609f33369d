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

TEST(LifetimeGpu, ObjectsOutliveMainThroughQuickExitPaths) {
    CUDACORE_REQUIRE_GPU();
    expect_clean_exit("exit");
}

}  // namespace
