// Without a driver every runtime entry point throws a clear, catchable NoDriverError.
// Runs in a child process whose driver path points at a missing file, so it holds on GPU
// machines too.
#include "test_support.hpp"

namespace {

using cudacore::test::helper_path;
using cudacore::test::run_process;

TEST(NoDriver, EveryEntryPointThrowsNoDriverError) {
    auto result = run_process({helper_path("no_driver_probe").string()},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(result.err, "");
    for (const char* entry : {"system::driver_version", "system::driver_path",
                              "system::device_count", "system::devices", "Device(0)",
                              "Device::current", "Stream::from_handle"}) {
        EXPECT_NE(result.out.find(std::string(entry) + ": NoDriverError"), std::string::npos)
            << entry << "\n" << result.out;
    }
    EXPECT_NE(result.out.find("driver_available: false"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

TEST(NoDriver, CliDevicesExplainsAndSucceeds) {
    auto result = run_process({cudacore::test::cli_path().string(), "devices"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("No CUDA driver"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CUDACORE_LIBCUDA_PATH"), std::string::npos) << result.out;
}

TEST(Cli, VersionAndHelp) {
    auto version = run_process({cudacore::test::cli_path().string(), "--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_NE(version.out.find("cudacore 0."), std::string::npos) << version.out;
    auto help = run_process({cudacore::test::cli_path().string(), "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("devices"), std::string::npos) << help.out;
    auto bad = run_process({cudacore::test::cli_path().string(), "no-such-command"});
    EXPECT_NE(bad.exit_code, 0);
}

}  // namespace
