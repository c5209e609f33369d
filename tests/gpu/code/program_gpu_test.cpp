// Program and Linker where a GPU decides: the default arch is the current device's, and the
// driver's linker takes over PTX when nvJitLink cannot be loaded.
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/device.hpp"
#include "cudacore/program.hpp"
#include "code/compiler_build.hpp"
#include "cudacore/system.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

using namespace cudacore;
using cudacore::test::cli_path;
using cudacore::test::read_file;
using cudacore::test::run_process;
using cudacore::test::TempDir;
using cudacore::test::write_file;

constexpr const char* kKernels = R"(
extern "C" __global__ void add_one(float* data) { data[threadIdx.x] += 1.0f; }
extern "C" __global__ void twice(float* data) { data[threadIdx.x] *= 2.0f; }
)";

// Compiled code that the device's own arch can run, as sm_NN (no a/f suffix in cubins).
std::string device_arch() { return Device::current().arch(); }

TEST(ProgramGpu, DefaultArchIsTheCurrentDevice) {
    CUDACORE_REQUIRE_GPU();
    Program program(kKernels, SourceType::cxx);  // no arch
    const auto flags = program.flags(CodeType::cubin);
    EXPECT_EQ(flags.at(0), "-arch=" + device_arch());
    ObjectCode cubin = program.compile(CodeType::cubin);
    CodeInfo info = inspect_code(cubin.code());
    EXPECT_EQ(info.arch, device_arch());
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"add_one", "twice"}));
    // And the driver accepts it.
    EXPECT_NO_THROW(cubin.get_kernel("add_one"));
}

TEST(ProgramGpu, DriverLinkerCompilesPtxWhenNvJitLinkIsMissing) {
    CUDACORE_REQUIRE_GPU();
    TempDir dir;
    ProgramOptions options;
    options.arch = device_arch();
    write_file(dir.path() / "k.ptx",
               std::string(Program(kKernels, SourceType::cxx, options).compile(CodeType::ptx).code()));
    // A separate process, so nvJitLink's loading fails there from the start.
    auto result = run_process({cli_path().string(), "compile", (dir.path() / "k.ptx").string(), "-o",
                               (dir.path() / "k.cubin").string()},
                              {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so.13"}});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    CodeInfo info = inspect_code(read_file(dir.path() / "k.cubin"));
    EXPECT_EQ(info.type, CodeType::cubin);
    EXPECT_EQ(info.arch, device_arch());
    EXPECT_EQ(info.kernels, (std::vector<std::string>{"add_one", "twice"}));

    // The driver's linker also reports errors as a failed compile with its log.
    write_file(dir.path() / "bad.ptx", ".version 8.0\n.target sm_90\nthis is not ptx\n");
    auto bad = run_process({cli_path().string(), "compile", (dir.path() / "bad.ptx").string(), "-o",
                            (dir.path() / "bad.cubin").string()},
                           {{"CUDACORE_NVJITLINK_PATH", "/nonexistent/libnvJitLink.so.13"}});
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_NE(bad.err.find("driver"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("cuLinkAddData"), std::string::npos) << bad.err;
}

// Keys of the driver's linker name the driver's build where the real name of the libcuda that
// loaded carries it (a driver update then misses), as /proc/self/maps shows that file.
TEST(ProgramGpu, DriverLinkerKeysNameTheDriversBuild) {
    CUDACORE_REQUIRE_GPU();
    const std::string keys = detail::driver_build_in_keys();
    EXPECT_EQ(keys.substr(0, keys.find(' ')), std::to_string(system::driver_version())) << keys;
    std::ifstream maps("/proc/self/maps");
    std::string mapped;
    for (std::string line; std::getline(maps, line);)
        if (const std::size_t at = line.find('/'); at != std::string::npos && line.find("/libcuda.so", at) != std::string::npos)
            mapped = line.substr(at);
    ASSERT_FALSE(mapped.empty()) << "libcuda is not mapped";
    const std::string name = std::filesystem::canonical(mapped).filename().string();
    const std::string prefix = "libcuda.so.";
    const std::string build = name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : "";
    std::printf("libcuda: %s; keys of the driver's linker name \"%s\"\n", name.c_str(), keys.c_str());
    if (std::count(build.begin(), build.end(), '.') == 2)
        EXPECT_EQ(keys, std::to_string(system::driver_version()) + " " + build);
    else
        EXPECT_EQ(keys, std::to_string(system::driver_version())) << "a name without a build adds none";
}

}  // namespace
