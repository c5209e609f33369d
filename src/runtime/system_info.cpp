#include "cudacore/system_info.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "loader/nvml_api.hpp"

namespace cudacore::system {

#ifdef CUDACORE_HAVE_NVML
namespace {

nvmlDevice_t raw(void* handle) { return static_cast<nvmlDevice_t>(handle); }

// NVML reports in its own units; name the device in errors by its handle's UUID when possible.
std::string describe(void* handle) {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (detail::nvml().nvmlDeviceGetUUID(raw(handle), uuid, sizeof uuid) == NVML_SUCCESS)
        return std::string("device ") + uuid;
    return "NVML device";
}

}  // namespace

bool nvml_available() noexcept {
    try {
        detail::nvml();
        return true;
    } catch (...) {
        return false;
    }
}

std::string nvml_driver_version() {
    char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    detail::check_nvml(detail::nvml().nvmlSystemGetDriverVersion(version, sizeof version),
                       "nvmlSystemGetDriverVersion", "");
    return version;
}

unsigned SystemDevice::count() {
    unsigned count = 0;
    detail::check_nvml(detail::nvml().nvmlDeviceGetCount_v2(&count), "nvmlDeviceGetCount_v2", "");
    return count;
}

SystemDevice SystemDevice::at(unsigned index) {
    const unsigned total = count();
    if (index >= total) {
        throw InvalidArgumentError("SystemDevice::at(" + std::to_string(index) + "): NVML sees " +
                                   std::to_string(total) + " device(s)");
    }
    nvmlDevice_t device = nullptr;
    detail::check_nvml(detail::nvml().nvmlDeviceGetHandleByIndex_v2(index, &device),
                       "nvmlDeviceGetHandleByIndex_v2", "index " + std::to_string(index));
    return SystemDevice(device);
}

SystemDevice SystemDevice::with_uuid(const std::string& uuid) {
    nvmlDevice_t device = nullptr;
    detail::check_nvml(detail::nvml().nvmlDeviceGetHandleByUUID(uuid.c_str(), &device),
                       "nvmlDeviceGetHandleByUUID", "uuid " + uuid);
    return SystemDevice(device);
}

std::vector<SystemDevice> SystemDevice::all() {
    std::vector<SystemDevice> devices;
    const unsigned total = count();
    for (unsigned i = 0; i < total; ++i) devices.push_back(at(i));
    return devices;
}

std::string SystemDevice::name() const {
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    detail::check_nvml(detail::nvml().nvmlDeviceGetName(raw(handle_), name, sizeof name),
                       "nvmlDeviceGetName", "NVML device");
    return name;
}

std::string SystemDevice::uuid() const {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    detail::check_nvml(detail::nvml().nvmlDeviceGetUUID(raw(handle_), uuid, sizeof uuid),
                       "nvmlDeviceGetUUID", "NVML device");
    return uuid;
}

std::string SystemDevice::pci_bus_id() const {
    nvmlPciInfo_t pci{};
    detail::check_nvml(detail::nvml().nvmlDeviceGetPciInfo_v3(raw(handle_), &pci),
                       "nvmlDeviceGetPciInfo_v3", describe(handle_));
    return pci.busId;
}

MemoryUsage SystemDevice::memory() const {
    nvmlMemory_t memory{};
    detail::check_nvml(detail::nvml().nvmlDeviceGetMemoryInfo(raw(handle_), &memory),
                       "nvmlDeviceGetMemoryInfo", describe(handle_));
    return {memory.total, memory.used, memory.free};
}

Utilization SystemDevice::utilization() const {
    nvmlUtilization_t rates{};
    detail::check_nvml(detail::nvml().nvmlDeviceGetUtilizationRates(raw(handle_), &rates),
                       "nvmlDeviceGetUtilizationRates", describe(handle_));
    return {rates.gpu, rates.memory};
}

int SystemDevice::temperature_celsius() const {
    nvmlTemperature_t reading{};
    reading.version = nvmlTemperature_v1;
    reading.sensorType = NVML_TEMPERATURE_GPU;
    detail::check_nvml(detail::nvml().nvmlDeviceGetTemperatureV(raw(handle_), &reading),
                       "nvmlDeviceGetTemperatureV", describe(handle_));
    return reading.temperature;
}

double SystemDevice::power_watts() const {
    unsigned milliwatts = 0;
    detail::check_nvml(detail::nvml().nvmlDeviceGetPowerUsage(raw(handle_), &milliwatts),
                       "nvmlDeviceGetPowerUsage", describe(handle_));
    return milliwatts / 1000.0;
}

double SystemDevice::power_limit_watts() const {
    unsigned milliwatts = 0;
    detail::check_nvml(detail::nvml().nvmlDeviceGetEnforcedPowerLimit(raw(handle_), &milliwatts),
                       "nvmlDeviceGetEnforcedPowerLimit", describe(handle_));
    return milliwatts / 1000.0;
}

Clocks SystemDevice::clocks() const {
    const auto& api = detail::nvml();
    Clocks clocks;
    auto read = [&](auto function, const char* call, nvmlClockType_t type, unsigned& out) {
        detail::check_nvml(function(raw(handle_), type, &out), call, describe(handle_));
    };
    read(api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", NVML_CLOCK_SM, clocks.sm_mhz);
    read(api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", NVML_CLOCK_MEM, clocks.memory_mhz);
    read(api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", NVML_CLOCK_GRAPHICS,
         clocks.graphics_mhz);
    read(api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM,
         clocks.max_sm_mhz);
    read(api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_MEM,
         clocks.max_memory_mhz);
    return clocks;
}

#else  // built without nvml.h

namespace {
[[noreturn]] void unavailable() {
    throw LoaderError("NVML (libnvidia-ml.so.1)", {}, "",
                      "cudacore was built without nvml.h (run scripts/setup.sh, which installs "
                      "the nvidia-nvml-dev package, and rebuild)");
}
}  // namespace

bool nvml_available() noexcept { return false; }
std::string nvml_driver_version() { unavailable(); }
unsigned SystemDevice::count() { unavailable(); }
SystemDevice SystemDevice::at(unsigned) { unavailable(); }
SystemDevice SystemDevice::with_uuid(const std::string&) { unavailable(); }
std::vector<SystemDevice> SystemDevice::all() { unavailable(); }
std::string SystemDevice::name() const { unavailable(); }
std::string SystemDevice::uuid() const { unavailable(); }
std::string SystemDevice::pci_bus_id() const { unavailable(); }
MemoryUsage SystemDevice::memory() const { unavailable(); }
Utilization SystemDevice::utilization() const { unavailable(); }
int SystemDevice::temperature_celsius() const { unavailable(); }
double SystemDevice::power_watts() const { unavailable(); }
double SystemDevice::power_limit_watts() const { unavailable(); }
Clocks SystemDevice::clocks() const { unavailable(); }
#endif

}  // namespace cudacore::system
