// The run-time loader: overridden paths, missing libraries, and the messages they give.
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "loader/dynamic_library.hpp"

#include <cstdlib>
#include <filesystem>

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

TEST(Loader, MissingNvFatbinNamesPathAndVariable) {
    auto result = run_process({helper_path("loader_probe").string(), "nvfatbin"},
                              {{"CUDACORE_NVFATBIN_PATH", "/nonexistent/libnvfatbin-missing.so"}});
    EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
    EXPECT_NE(result.out.find("nvFatbin (libnvfatbin.so.13)"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libnvfatbin-missing.so"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CUDACORE_NVFATBIN_PATH"), std::string::npos) << result.out;
}

TEST(Loader, NvFatbinLoadsFromToolkitOrPackage) {
    auto result = run_process({helper_path("loader_probe").string(), "nvfatbin"});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvfatbin 13."), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("libnvfatbin.so.13"), std::string::npos) << result.out;
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

// NVRTC (with its builtins) and nvJitLink of this machine, linked into `folder` by their sonames,
// as an application would ship them. Symbolic links: the loader names what it opened by the
// path it asked for, so the report shows which folder won.
void ship_compilers_into(const std::filesystem::path& folder) {
    namespace fs = std::filesystem;
    fs::create_directories(folder);
    const fs::path nvrtc = fs::canonical(cudacore::system::nvrtc_path());
    fs::create_symlink(nvrtc, folder / "libnvrtc.so.13");
    for (const auto& entry : fs::directory_iterator(nvrtc.parent_path())) {
        if (entry.path().filename().string().rfind("libnvrtc-builtins.so.13.", 0) == 0)
            fs::create_symlink(entry.path(), folder / entry.path().filename());
    }
    fs::create_symlink(fs::canonical(cudacore::system::nvjitlink_path()),
                       folder / "libnvJitLink.so.13");
}

TEST(Loader, CompilersBesideTheExecutableComeFirst) {
    cudacore::test::TempDir app;
    const auto probe = app.path() / "my_application";
    std::filesystem::copy_file(helper_path("loader_probe"), probe);
    ship_compilers_into(app.path());
    auto result = run_process({probe.string(), "compiler-paths"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvrtc path " + (app.path() / "libnvrtc.so.13").string() + "\n"),
              std::string::npos)
        << result.out;
    EXPECT_NE(
        result.out.find("nvjitlink path " + (app.path() / "libnvJitLink.so.13").string() + "\n"),
        std::string::npos)
        << result.out;
}

TEST(Loader, CompilersBesideInstalledBinariesInLib) {
    cudacore::test::TempDir prefix;
    std::filesystem::create_directories(prefix.path() / "bin");
    const auto probe = prefix.path() / "bin" / "my_application";
    std::filesystem::copy_file(helper_path("loader_probe"), probe);
    ship_compilers_into(prefix.path() / "lib");
    auto result = run_process({probe.string(), "compiler-paths"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("nvrtc path " + (prefix.path() / "lib" / "libnvrtc.so.13").string()),
              std::string::npos)
        << result.out;
}

TEST(Loader, CompilersFromTheWheelsOfAPythonEnvironment) {
    // A virtual environment's layout, and a site-packages folder named directly.
    cudacore::test::TempDir venv;
    const auto site = venv.path() / "lib" / "python3.11" / "site-packages";
    ship_compilers_into(site / "nvidia" / "cu13" / "lib");
    for (const auto& prefix : {venv.path(), site}) {
        auto result = run_process({helper_path("loader_probe").string(), "compiler-paths"},
                                  {{"CUDACORE_PYTHON_PREFIX", prefix.string()}});
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        const auto lib = site / "nvidia" / "cu13" / "lib";
        EXPECT_NE(result.out.find("nvrtc path " + (lib / "libnvrtc.so.13").string()),
                  std::string::npos)
            << prefix << "\n" << result.out;
        EXPECT_NE(result.out.find("nvjitlink path " + (lib / "libnvJitLink.so.13").string()),
                  std::string::npos)
            << prefix << "\n" << result.out;
    }
}

TEST(Loader, CompilerCandidatesPutTheApplicationFirst) {
    // What a failed search lists as tried, in order: the executable's folder, its ../lib, the
    // Python environment's wheel folder, LD_LIBRARY_PATH's folders, the toolkit's lib64, then the
    // sonames (the loader's own search) last: every candidate but those is a path, identified by
    // its file without opening it.
    cudacore::test::TempDir venv, first, second, home;
    cudacore::test::ScopedEnv prefix("CUDACORE_PYTHON_PREFIX", venv.path().c_str());
    const std::string library_path = first.path().string() + ":" + second.path().string();
    cudacore::test::ScopedEnv ld("LD_LIBRARY_PATH", library_path.c_str());
    cudacore::test::ScopedEnv cuda_home("CUDA_HOME", home.path().c_str());
    const auto candidates = cudacore::detail::compiler_library_candidates(
        {"libnvrtc.so.13", "libnvrtc.so"});
    const auto exe = std::filesystem::read_symlink("/proc/self/exe").parent_path();
    ASSERT_GE(candidates.size(), 8u);
    EXPECT_EQ(candidates[0], (exe / "libnvrtc.so.13").lexically_normal().string());
    EXPECT_EQ(candidates[1], (exe.parent_path() / "lib" / "libnvrtc.so.13").string());
    EXPECT_EQ(candidates[2], (venv.path() / "nvidia/cu13/lib/libnvrtc.so.13").string());
    EXPECT_EQ(candidates[3], (first.path() / "libnvrtc.so.13").string());
    EXPECT_EQ(candidates[4], (second.path() / "libnvrtc.so.13").string());
    EXPECT_EQ(candidates[5], (home.path() / "lib64/libnvrtc.so.13").string());
    EXPECT_EQ(candidates[candidates.size() - 2], "libnvrtc.so.13");
    EXPECT_EQ(candidates.back(), "libnvrtc.so");
    for (std::size_t i = 0; i + 2 < candidates.size(); ++i)
        EXPECT_NE(candidates[i].find('/'), std::string::npos) << candidates[i];
}

}  // namespace
