// Typed device properties and NVML's system information on a real GPU, checked against the
// driver's own attributes and against nvidia-smi.
#include "test_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"

#include <cctype>
#include <sstream>

namespace {

using namespace cudacore;

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    while (std::getline(in, field, ',')) {
        while (!field.empty() && std::isspace(static_cast<unsigned char>(field.front()))) field.erase(0, 1);
        while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) field.pop_back();
        fields.push_back(field);
    }
    return fields;
}

std::string lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

TEST(DevicePropertiesGpu, EveryMemberEqualsTheDriversAttribute) {
    CUDACORE_REQUIRE_GPU();
    for (const Device& device : system::devices()) {
        const DeviceProperties& properties = device.properties();
        int checked = 0;
#define CUDACORE_DEVICE_PROPERTY(suffix, member, type)                                      \
    {                                                                                       \
        int value = 0;                                                                      \
        bool known = true;                                                                  \
        try {                                                                               \
            value = device.attribute(CU_DEVICE_ATTRIBUTE_##suffix);                         \
        } catch (const Error&) {                                                            \
            known = false; /* newer than this driver: the member keeps its default */      \
        }                                                                                   \
        EXPECT_EQ(properties.member, known ? static_cast<type>(value) : type{}) << #member; \
        ++checked;                                                                          \
    }
#include "cudacore/device_property_list.inc"
#undef CUDACORE_DEVICE_PROPERTY
        EXPECT_GT(checked, 100);
        EXPECT_EQ(properties.warp_size, 32);
        EXPECT_EQ(properties.multiprocessor_count, device.multiprocessor_count());
        // Read once, cached: the same object every time.
        EXPECT_EQ(&device.properties(), &properties);
    }
}

TEST(SystemInfoGpu, SystemDeviceMatchesNvidiaSmi) {
    CUDACORE_REQUIRE_GPU();
    if (!system::nvml_available()) GTEST_SKIP() << "NVML (libnvidia-ml.so.1) is not installed";
    auto smi = test::run_process({"nvidia-smi", "--query-gpu=uuid,pci.bus_id,memory.total,name,driver_version",
                                  "--format=csv,noheader,nounits"});
    if (smi.exit_code != 0) GTEST_SKIP() << "nvidia-smi did not run: " << smi.err;
    std::map<std::string, std::vector<std::string>> by_uuid;
    std::stringstream lines(smi.out);
    std::string line;
    while (std::getline(lines, line)) {
        auto fields = split_csv(line);
        if (fields.size() == 5) by_uuid[fields[0]] = fields;
    }
    ASSERT_FALSE(by_uuid.empty()) << smi.out;
    EXPECT_EQ(system::SystemDevice::count(), by_uuid.size());
    for (const Device& device : system::devices()) {
        const system::SystemDevice nvml = device.system_device();
        ASSERT_EQ(nvml.uuid(), device.uuid_string());
        ASSERT_TRUE(by_uuid.count(nvml.uuid())) << nvml.uuid() << " not listed by nvidia-smi";
        const auto& row = by_uuid[nvml.uuid()];
        EXPECT_EQ(lower(nvml.pci_bus_id()), lower(row[1]));
        // CUDA's bus id has a 4-digit domain, NVML's 8: the same device either way.
        EXPECT_NE(lower(nvml.pci_bus_id()).find(lower(device.pci_bus_id()).substr(5)),
                  std::string::npos);
        EXPECT_EQ(nvml.memory().total_bytes / (1024 * 1024), std::stoull(row[2]));
        EXPECT_EQ(nvml.name(), row[3]);
        EXPECT_EQ(system::nvml_driver_version(), row[4]);
        const auto memory = nvml.memory();
        EXPECT_LE(memory.used_bytes, memory.total_bytes);
        EXPECT_LE(nvml.utilization().gpu_percent, 100u);
        const int temperature = nvml.temperature_celsius();
        EXPECT_GT(temperature, 0);
        EXPECT_LT(temperature, 120);
        EXPECT_GT(nvml.power_watts(), 0.0);
        EXPECT_GE(nvml.power_limit_watts(), nvml.power_watts() * 0.5);
        const auto clocks = nvml.clocks();
        EXPECT_GT(clocks.max_sm_mhz, 0u);
        EXPECT_LE(clocks.sm_mhz, clocks.max_sm_mhz);
    }
    EXPECT_THROW(system::SystemDevice::at(system::SystemDevice::count()), InvalidArgumentError);
    EXPECT_THROW(system::SystemDevice::with_uuid("GPU-00000000-0000-0000-0000-000000000000"), NvmlError);
}

TEST(SystemInfoGpu, DevicesCommandPrintsJsonWithSystemReadings) {
    CUDACORE_REQUIRE_GPU();
    auto result = test::run_process({test::cli_path().string(), "devices", "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("\"uuid\": \"" + Device(0).uuid_string() + "\""), std::string::npos) << result.out;
    if (system::nvml_available()) {
        EXPECT_NE(result.out.find("\"temperature_celsius\""), std::string::npos) << result.out;
        EXPECT_NE(result.out.find("\"driver_version\""), std::string::npos) << result.out;
    }
}

}  // namespace
