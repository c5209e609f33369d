// `cudacore devices`: each device's properties, like deviceQuery.
#include "commands.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

namespace cudacore::cli {

namespace {

// NVML's live readings, or the reason there are none (NVML absent, a reading not supported).
void print_system_readings(const Device& device) {
    try {
        const system::SystemDevice nvml = device.system_device();
        const auto memory = nvml.memory();
        std::printf("  memory used            %.2f / %.2f GiB\n",
                    static_cast<double>(memory.used_bytes) / (1u << 30),
                    static_cast<double>(memory.total_bytes) / (1u << 30));
        const auto utilization = nvml.utilization();
        std::printf("  utilization            %u%% GPU, %u%% memory\n", utilization.gpu_percent,
                    utilization.memory_percent);
        std::printf("  temperature            %d C\n", nvml.temperature_celsius());
        std::printf("  power                  %.1f W of %.1f W\n", nvml.power_watts(),
                    nvml.power_limit_watts());
        const auto clocks = nvml.clocks();
        std::printf("  clocks                 SM %u MHz (max %u), memory %u MHz (max %u)\n",
                    clocks.sm_mhz, clocks.max_sm_mhz, clocks.memory_mhz, clocks.max_memory_mhz);
    } catch (const Error& e) {
        std::printf("  system information     unavailable: %s\n", e.what());
    }
}

// One device as JSON: identity, the typed properties that matter most, and NVML's readings.
nlohmann::json device_json(const Device& device, bool all_attributes) {
    nlohmann::json out;
    const auto cc = device.compute_capability();
    out["ordinal"] = device.ordinal();
    out["name"] = device.name();
    out["arch"] = device.arch();
    out["compute_capability"] = std::to_string(cc.major) + "." + std::to_string(cc.minor);
    out["uuid"] = device.uuid_string();
    out["pci_bus_id"] = device.pci_bus_id();
    out["total_memory_bytes"] = device.total_memory();
    out["multiprocessor_count"] = device.multiprocessor_count();
    if (all_attributes) out["attributes"] = device.attributes();
    try {
        const system::SystemDevice nvml = device.system_device();
        const auto memory = nvml.memory();
        const auto utilization = nvml.utilization();
        const auto clocks = nvml.clocks();
        out["system"] = {
            {"pci_bus_id", nvml.pci_bus_id()},
            {"memory_used_bytes", memory.used_bytes},
            {"memory_total_bytes", memory.total_bytes},
            {"utilization_gpu_percent", utilization.gpu_percent},
            {"utilization_memory_percent", utilization.memory_percent},
            {"temperature_celsius", nvml.temperature_celsius()},
            {"power_watts", nvml.power_watts()},
            {"power_limit_watts", nvml.power_limit_watts()},
            {"clock_sm_mhz", clocks.sm_mhz},
            {"clock_memory_mhz", clocks.memory_mhz},
            {"clock_max_sm_mhz", clocks.max_sm_mhz},
            {"clock_max_memory_mhz", clocks.max_memory_mhz}};
    } catch (const Error& e) {
        out["system_error"] = e.what();
    }
    return out;
}

void print_json(bool all_attributes) {
    nlohmann::json out;
    try {
        const int version = system::driver_version();
        out["driver_api_version"] = version;
    } catch (const NoDriverError& e) {
        out["driver_error"] = e.what();
        out["devices"] = nlohmann::json::array();
        std::cout << out.dump(2) << "\n";
        return;
    }
    try {
        out["driver_version"] = system::nvml_driver_version();
    } catch (const Error& e) {
        out["system_error"] = e.what();
    }
    out["devices"] = nlohmann::json::array();
    for (const Device& device : system::devices())
        out["devices"].push_back(device_json(device, all_attributes));
    std::cout << out.dump(2) << "\n";
}

void print_device(const Device& device, bool all_attributes) {
    const auto cc = device.compute_capability();
    std::printf("Device %d: %s\n", device.ordinal(), device.name().c_str());
    std::printf("  arch                   %s (compute capability %d.%d)\n", device.arch().c_str(),
                cc.major, cc.minor);
    std::printf("  uuid                   %s\n", device.uuid_string().c_str());
    std::printf("  pci bus id             %s\n", device.pci_bus_id().c_str());
    std::printf("  total memory           %.1f GiB\n",
                static_cast<double>(device.total_memory()) / (1024.0 * 1024.0 * 1024.0));
    std::printf("  multiprocessors        %d\n", device.multiprocessor_count());
    std::printf("  max threads per block  %d\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
    std::printf("  shared memory / block  %d bytes (opt-in %d)\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
                device.attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
    std::printf("  clock rate             %d kHz\n", device.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
    std::printf("  memory pools           %s\n",
                device.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) ? "yes" : "no");
    print_system_readings(device);
    if (all_attributes) {
        std::printf("  attributes:\n");
        for (const auto& [name, value] : device.attributes())
            std::printf("    %-52s %d\n", name.c_str(), value);
    }
}

}  // namespace

void add_devices_command(CLI::App& app) {
    auto* command = app.add_subcommand("devices", "List CUDA devices and their properties");
    auto all = std::make_shared<bool>(false);
    command->add_flag("--all", *all, "Print every device attribute");
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "Print JSON (for scripts) instead of text");
    command->callback([all, json] {
        if (*json) return print_json(*all);
        try {
            const int version = system::driver_version();
            std::printf("CUDA driver %d.%d (%s), cudacore built for CUDA %d.%d\n", version / 1000,
                        version % 1000 / 10, system::driver_path().c_str(),
                        system::built_cuda_version() / 1000,
                        system::built_cuda_version() % 1000 / 10);
        } catch (const NoDriverError& e) {
            std::cout << "No CUDA driver: " << e.what() << "\n";
            return;  // not an error: this machine simply has no GPU
        }
        try {
            std::printf("NVIDIA driver %s (NVML)\n", system::nvml_driver_version().c_str());
        } catch (const Error& e) {
            std::printf("NVML unavailable: %s\n", e.what());
        }
        const int count = system::device_count();
        std::printf("%d device(s)\n", count);
        for (const Device& device : system::devices()) print_device(device, *all);
    });
}

}  // namespace cudacore::cli
