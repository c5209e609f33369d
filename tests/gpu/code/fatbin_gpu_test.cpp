// Fatbins on a GPU: the driver picks the device's cubin from a multi-architecture fatbin, JIT-
// compiles PTX when no cubin fits, and a fatbin with nothing for the device is refused at load
// with a message naming the device's arch and what the fatbin holds. Prints each fatbin's bytes
// and its images' sizes.
#include "test_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/code_inspection.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"

#include <iostream>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
template <typename T>
__global__ void scale(T* data, T factor, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = data[i] * factor + T(1);
}
)";

ObjectCode fatbin_for(const std::vector<std::string>& targets) {
    ProgramOptions options;
    options.name = "fatbin_scale.cu";
    const ObjectCode fatbin =
        compile_fatbin(Program(kSource, SourceType::cxx, options), targets, {"scale<float>"});
    std::cout << "fatbin of";
    for (const auto& target : targets) std::cout << " " << target;
    std::cout << ": " << fatbin.size() << " bytes\n";
    for (const FatbinEntry& entry : inspect_code(fatbin).entries) {
        std::cout << "  " << entry.kind << " " << entry.arch << " " << entry.size << " bytes"
                  << (entry.compressed ? " (compressed)" : "") << "\n";
    }
    return fatbin;
}

// Launches scale<float> from `code` on 4096 values and checks every one.
void launch_and_check(const ObjectCode& code) {
    Device device(0);
    Stream stream = device.create_stream();
    constexpr int n = 4096;
    std::vector<float> host(n);
    for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
    Buffer data = device.allocate(n * sizeof(float), stream);
    data.copy_from(host, stream);
    const Kernel kernel = code.get_kernel("scale<float>");
    LaunchConfig config;
    config.grid = Dim3((n + 255) / 256);
    config.block = Dim3(256);
    launch(stream, config, kernel, data, 3.0f, n);
    std::vector<float> result(n);
    data.copy_to(result, stream);
    stream.sync();
    for (int i = 0; i < n; ++i)
        ASSERT_EQ(result[i], static_cast<float>(i) * 3.0f + 1.0f) << "at " << i;
    const ComputeCapability cc = device.compute_capability();
    EXPECT_EQ(kernel.binary_version(device), cc.major * 10 + cc.minor);
    std::cout << "  ran on " << device.arch() << ": binary version " << kernel.binary_version(device)
              << ", PTX version " << kernel.ptx_version(device) << "\n";
}

TEST(FatbinGpu, CubinsAndPtxRunOnTheDevice) {
    CUDACORE_REQUIRE_GPU();
    const ObjectCode fatbin = fatbin_for({"sm_80", "sm_90", "compute_90"});
    EXPECT_EQ(inspect_code(fatbin).entries.size(), 3u);
    launch_and_check(fatbin);
}

TEST(FatbinGpu, PtxAloneIsCompiledForTheDevice) {
    CUDACORE_REQUIRE_GPU();
    const ObjectCode fatbin = fatbin_for({"compute_80"});
    launch_and_check(fatbin);
    // The driver compiled the compute_80 PTX: the kernel records it.
    EXPECT_EQ(fatbin.get_kernel("scale<float>").ptx_version(Device(0)), 80);
}

TEST(FatbinGpu, NothingForTheDeviceIsRefusedAtLoad) {
    CUDACORE_REQUIRE_GPU();
    const std::string device_arch = Device(0).arch();
    // A cubin of another major version: the driver cannot run it here.
    const std::string other = Device(0).compute_capability().major == 8 ? "sm_90" : "sm_80";
    const ObjectCode fatbin = fatbin_for({other});
    try {
        fatbin.get_kernel("scale<float>");
        FAIL() << "a fatbin holding only " << other << " loaded on " << device_arch;
    } catch (const Error& e) {
        const std::string message = e.what();
        std::cout << "  refused: " << message << "\n";
        EXPECT_NE(message.find("(" + device_arch + ")"), std::string::npos) << message;
        EXPECT_NE(message.find("holding elf:" + other), std::string::npos) << message;
        EXPECT_NE(message.find("fatbin 'fatbin_scale.cu'"), std::string::npos) << message;
    }
}

}  // namespace
