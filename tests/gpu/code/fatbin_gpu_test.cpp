// Fatbins on a GPU: the driver picks the device's cubin from a multi-architecture fatbin, JIT-
// compiles PTX when no cubin fits, and a fatbin with nothing for the device is refused at load
// with a message naming the device's arch and what the fatbin holds. Each fatbin runs serialized,
// in another process. Prints each fatbin's bytes and its images' sizes.
#include "scale_kernel.hpp"
#include "test_support.hpp"

#include "cudacore/code_inspection.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/fatbin_compile.hpp"
#include "cudacore/kernel.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

ObjectCode fatbin_for(const std::vector<std::string>& targets) {
    ProgramOptions options;
    options.name = "fatbin_scale.cu";
    const Program program(test::kScaleSource, SourceType::cxx, options);
    const ObjectCode fatbin = compile_fatbin(program, targets, {"scale<float>"});
    std::cout << "fatbin of";
    for (const auto& target : targets) std::cout << " " << target;
    std::cout << ": " << fatbin.size() << " bytes\n";
    for (const FatbinEntry& entry : inspect_code(fatbin).entries) {
        std::cout << "  " << entry.kind << " " << entry.arch << " " << entry.size << " bytes"
                  << (entry.compressed ? " (compressed)" : "") << "\n";
    }
    return fatbin;
}

// Ships `code` to helper_serialized_launch, which launches scale<float> on 4096 values and checks
// every one; the kernel the driver picked must be built for this device.
void launch_and_check(const ObjectCode& code) {
    test::TempDir dir;
    const std::string path = (dir.path() / "fatbin_scale.ccobj").string();
    code.save(path);
    const auto launched =
        test::run_process({test::helper_path("serialized_launch").string(), "launch", path});
    std::cout << "  " << launched.out;
    ASSERT_EQ(launched.exit_code, 0) << launched.out << launched.err;
    EXPECT_NE(launched.out.find("ok 4096 values"), std::string::npos) << launched.out;
    const ComputeCapability cc = Device(0).compute_capability();
    const std::string binary_version = std::to_string(cc.major * 10 + cc.minor);
    EXPECT_NE(launched.out.find("binary version " + binary_version + ","), std::string::npos)
        << launched.out;
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
