// Device properties agree with the driver (and with nvidia-smi where it is installed).
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "loader/driver_api.hpp"

#include <filesystem>
#include <regex>
#include <sstream>

namespace {

using namespace cudacore;

TEST(DeviceGpu, PropertiesAgreeWithDriver) {
    CUDACORE_REQUIRE_GPU();
    const auto& api = detail::driver();
    int count = 0;
    ASSERT_EQ(api.cuDeviceGetCount(&count), CUDA_SUCCESS);
    ASSERT_EQ(system::device_count(), count);
    for (const Device& device : system::devices()) {
        CUdevice raw = 0;
        ASSERT_EQ(api.cuDeviceGet(&raw, device.ordinal()), CUDA_SUCCESS);
        char name[256] = {};
        api.cuDeviceGetName(name, sizeof name, raw);
        EXPECT_EQ(device.name(), name);
        int major = 0, minor = 0, sms = 0;
        api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, raw);
        api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, raw);
        api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, raw);
        EXPECT_EQ(device.compute_capability(), (ComputeCapability{major, minor}));
        EXPECT_EQ(device.arch(), "sm_" + std::to_string(major) + std::to_string(minor));
        EXPECT_EQ(device.multiprocessor_count(), sms);
        size_t total = 0;
        api.cuDeviceTotalMem(&total, raw);
        EXPECT_EQ(device.total_memory(), total);
        EXPECT_GT(total, size_t{1} << 30);

        auto attributes = device.attributes();
        EXPECT_GT(attributes.size(), 100u);
        EXPECT_EQ(attributes.at("multiprocessor_count"), sms);
        EXPECT_EQ(attributes.at("compute_capability_major"), major);
        EXPECT_EQ(attributes.at("max_threads_per_block"),
                  device.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
        // Attribute 102 under its current name, as cuda.core names it, not its deprecated alias.
        EXPECT_EQ(attributes.at("virtual_memory_management_supported"),
                  device.attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED));
        EXPECT_EQ(attributes.count("virtual_address_management_supported"), 0u);

        EXPECT_TRUE(std::regex_match(device.uuid_string(),
                                     std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                                                "[0-9a-f]{4}-[0-9a-f]{12}")))
            << device.uuid_string();
        EXPECT_TRUE(std::regex_match(device.pci_bus_id(),
                                     std::regex("[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9]")))
            << device.pci_bus_id();
    }
}

TEST(DeviceGpu, AgreesWithNvidiaSmi) {
    CUDACORE_REQUIRE_GPU();
    std::string smi;
    for (const char* candidate : {"/usr/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi",
                                  "/usr/local/bin/nvidia-smi"})
        if (std::filesystem::exists(candidate)) smi = candidate;
    if (smi.empty()) GTEST_SKIP() << "nvidia-smi is not installed here";
    auto result = test::run_process(
        {smi, "--query-gpu=name,uuid,pci.bus_id", "--format=csv,noheader"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    Device device(0);
    std::istringstream first_line(result.out.substr(0, result.out.find('\n')));
    std::string name, uuid, bus;
    std::getline(first_line, name, ',');
    std::getline(first_line >> std::ws, uuid, ',');
    std::getline(first_line >> std::ws, bus);
    EXPECT_EQ(device.name(), name);
    EXPECT_EQ(device.uuid_string(), uuid);
    // nvidia-smi prints an 8-digit domain, the driver a 4-digit one.
    auto lower = [](std::string s) { for (auto& c : s) c = std::tolower(c); return s; };
    EXPECT_NE(lower(bus).find(lower(device.pci_bus_id()).substr(5)), std::string::npos)
        << bus << " vs " << device.pci_bus_id();
}

TEST(DeviceGpu, CurrentAndContext) {
    CUDACORE_REQUIRE_GPU();
    Device device(0);
    Context context = device.set_current();
    EXPECT_EQ(Device::current(), device);
    CUcontext current = nullptr;
    detail::driver().cuCtxGetCurrent(&current);
    EXPECT_EQ(current, context.handle());
    EXPECT_EQ(device.context(), context);  // one primary context, shared
    EXPECT_EQ(context.device(), device);
    device.sync();
}

TEST(DeviceGpu, OutOfRangeOrdinalIsClearError) {
    CUDACORE_REQUIRE_GPU();
    try {
        Device device(system::device_count());
        FAIL() << "no exception";
    } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
    }
    EXPECT_THROW(Device(-1), InvalidArgumentError);
}

}  // namespace
