// The run-time loader: overridden paths, missing libraries, and the messages they give.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"

namespace {

using cudacore::test::helper_path;
using cudacore::test::run_process;

TEST(Loader, MissingDriverNamesPathAndVariable) {
    auto result = run_process({helper_path("loader_probe").string(), "driver"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-missing.so.1"}});
    EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
    EXPECT_NE(result.out.find("NoDriverError"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libcuda-missing.so.1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CUDACORE_LIBCUDA_PATH"), std::string::npos) << result.out;
}

TEST(Loader, MissingNvrtcNamesPathAndVariable) {
    auto result = run_process({helper_path("loader_probe").string(), "nvrtc"},
                              {{"CUDACORE_NVRTC_PATH", "/nonexistent/libnvrtc-missing.so"}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.out.find("LoaderError"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libnvrtc-missing.so"), std::string::npos);
    EXPECT_NE(result.out.find("CUDACORE_NVRTC_PATH"), std::string::npos);
}

TEST(Loader, MissingNvJitLinkNamesPathAndVariable) {
    auto result = run_process({helper_path("loader_probe").string(), "nvjitlink"},
                              {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink-missing.so"}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.out.find("/nonexistent/libnvJitLink-missing.so"), std::string::npos);
    EXPECT_NE(result.out.find("CUDACORE_NVJITLINK_PATH"), std::string::npos);
}

TEST(Loader, WrongLibraryAtOverriddenPathIsRejected) {
    // A real shared library that is not the driver: it opens but has no cuGetProcAddress_v2.
    auto result = run_process({helper_path("loader_probe").string(), "driver"},
                              {{"CUDACORE_LIBCUDA_PATH", "libm.so.6"}});
    EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
    EXPECT_NE(result.out.find("cuGetProcAddress_v2"), std::string::npos) << result.out;
}

TEST(Loader, NvrtcLoadsFromToolkit) {
    auto result = run_process({helper_path("loader_probe").string(), "nvrtc"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvrtc 13."), std::string::npos) << result.out;
}

TEST(Loader, NvJitLinkLoadsFromToolkit) {
    auto result = run_process({helper_path("loader_probe").string(), "nvjitlink"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvjitlink 13."), std::string::npos) << result.out;
}

TEST(Loader, MissingNvvmNamesPathAndVariable) {
    auto result = run_process({helper_path("loader_probe").string(), "nvvm"},
                              {{"CUDACORE_NVVM_PATH", "/nonexistent/libnvvm-missing.so"}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.out.find("libNVVM"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libnvvm-missing.so"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CUDACORE_NVVM_PATH"), std::string::npos) << result.out;
}

TEST(Loader, NvvmAndLibdeviceLoadFromToolkitOrPackage) {
    auto result = run_process({helper_path("loader_probe").string(), "nvvm"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvvm 2."), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("libdevice.10.bc"), std::string::npos) << result.out;
}

TEST(Loader, MissingNvmlIsAClearErrorAndNothingElseNeedsIt) {
    auto result = run_process({helper_path("loader_probe").string(), "nvml"},
                              {{"CUDACORE_NVML_PATH", "/nonexistent/libnvidia-ml-missing.so.1"}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.out.find("available 0"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("NVML"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libnvidia-ml-missing.so.1"), std::string::npos);
    EXPECT_NE(result.out.find("CUDACORE_NVML_PATH"), std::string::npos);
    // NVRTC (and everything else) is unaffected in the same situation.
    auto nvrtc = run_process({helper_path("loader_probe").string(), "nvrtc"},
                             {{"CUDACORE_NVML_PATH", "/nonexistent/libnvidia-ml-missing.so.1"}});
    EXPECT_EQ(nvrtc.exit_code, 0) << nvrtc.out;
}

TEST(Loader, SameErrorOnEveryCall) {
    auto result = run_process({helper_path("loader_probe").string(), "driver-twice"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("same error twice"), std::string::npos) << result.out;
}

}  // namespace
