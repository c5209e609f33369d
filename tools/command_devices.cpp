// `cudacore devices`: each device's properties, like deviceQuery.
#include "commands.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/system.hpp"
#include "cudacore/system_info.hpp"
#include "cudacore/system_topology.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

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

// An optional reading as JSON: null when not supported.
template <class T>
nlohmann::json optional_json(const std::optional<T>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The readings a GPU may not support (null when it does not): ECC, processes, NVLinks.
nlohmann::json readings_json(const system::SystemReadings& r) {
    nlohmann::json out;
    out["ecc_enabled"] = optional_json(r.ecc.enabled);
    out["ecc_pending"] = optional_json(r.ecc.pending);
    out["ecc_corrected_volatile"] = optional_json(r.ecc.corrected_volatile);
    out["ecc_uncorrected_volatile"] = optional_json(r.ecc.uncorrected_volatile);
    out["ecc_corrected_aggregate"] = optional_json(r.ecc.corrected_aggregate);
    out["ecc_uncorrected_aggregate"] = optional_json(r.ecc.uncorrected_aggregate);
    if (r.processes) {
        out["processes"] = nlohmann::json::array();
        for (const auto& p : *r.processes)
            out["processes"].push_back({{"pid", p.pid}, {"used_memory_bytes", optional_json(p.used_memory_bytes)}});
    } else {
        out["processes"] = nullptr;
    }
    if (r.nvlinks) {
        out["nvlinks"] = nlohmann::json::array();
        for (const auto& l : *r.nvlinks)
            out["nvlinks"].push_back({{"link", l.link},
                                      {"active", l.active},
                                      {"remote_pci_bus_id", l.remote_pci_bus_id},
                                      {"remote_index", optional_json(l.remote_index)},
                                      {"to_switch", l.to_switch}});
    } else {
        out["nvlinks"] = nullptr;
    }
    return out;
}

// The matrix of links between GPUs, as JSON (NVML index order).
nlohmann::json topology_json(const system::Topology& topology) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
        nlohmann::json row;
        row["index"] = i;
        row["name"] = topology.names[i];
        row["pci_bus_id"] = topology.pci_bus_ids[i];
        row["cuda_ordinal"] = optional_json(topology.cuda_ordinals[i]);
        row["links"] = nlohmann::json::array();
        for (std::size_t j = 0; j < topology.links.size(); ++j) {
            if (i == j) continue;
            const auto& link = topology.links[i][j];
            row["links"].push_back(
                {{"peer", j},
                 {"label", system::link_label(link)},
                 {"level", link.level ? nlohmann::json(system::topology_level_name(*link.level))
                                      : nlohmann::json(nullptr)},
                 {"nvlinks", link.nvlinks},
                 {"p2p_read", optional_json(link.peer.read)},
                 {"p2p_write", optional_json(link.peer.write)},
                 {"p2p_atomics", optional_json(link.peer.atomics)},
                 {"p2p_nvlink", optional_json(link.peer.nvlink)}});
        }
        out.push_back(row);
    }
    return out;
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
        out["system"].update(readings_json(nvml.readings()));
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
    try {
        out["topology"] = topology_json(system::topology());
    } catch (const Error& e) {
        out["topology_error"] = e.what();
    }
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

template <class T>
std::string or_not_supported(const std::optional<T>& value, const char* unit = "") {
    if (!value) return "not supported";
    std::ostringstream out;
    out << *value << unit;
    return out.str();
}

std::string yes_no(const std::optional<bool>& value) {
    return value ? (*value ? "yes" : "no") : "not supported";
}

// One GPU's readings for --topology; each unsupported one says so.
void print_gpu_readings(std::size_t index, const system::Topology& topology) {
    const system::SystemDevice gpu = system::SystemDevice::at(static_cast<unsigned>(index));
    const system::SystemReadings r = gpu.readings();
    std::printf("GPU%zu: %s (%s)\n", index, topology.names[index].c_str(), topology.pci_bus_ids[index].c_str());
    std::printf("  clocks                 SM %s (max %s), memory %s (max %s)\n",
                or_not_supported(r.sm_mhz, " MHz").c_str(), or_not_supported(r.max_sm_mhz, " MHz").c_str(),
                or_not_supported(r.memory_mhz, " MHz").c_str(),
                or_not_supported(r.max_memory_mhz, " MHz").c_str());
    std::printf("  power                  %s of %s\n", or_not_supported(r.power_watts, " W").c_str(),
                or_not_supported(r.power_limit_watts, " W").c_str());
    std::printf("  temperature            %s\n", or_not_supported(r.temperature_celsius, " C").c_str());
    std::printf("  utilization            %s\n",
                r.utilization ? (std::to_string(r.utilization->gpu_percent) + "% GPU, " +
                                 std::to_string(r.utilization->memory_percent) + "% memory").c_str()
                              : "not supported");
    std::printf("  ECC                    %s (pending %s), errors corrected %s, uncorrected %s (volatile)\n",
                yes_no(r.ecc.enabled).c_str(), yes_no(r.ecc.pending).c_str(),
                or_not_supported(r.ecc.corrected_volatile).c_str(),
                or_not_supported(r.ecc.uncorrected_volatile).c_str());
    if (r.nvlinks) {
        std::size_t active = 0;
        for (const auto& link : *r.nvlinks) active += link.active ? 1 : 0;
        std::printf("  NVLinks                %zu, %zu active\n", r.nvlinks->size(), active);
        for (const auto& link : *r.nvlinks) {
            if (!link.active) continue;
            const std::string peer = link.remote_index ? "GPU" + std::to_string(*link.remote_index)
                                     : link.to_switch  ? "an NVSwitch"
                                                       : "not a GPU";
            std::printf("    link %-2u              up, to %s (%s)\n", link.link,
                        link.remote_pci_bus_id.c_str(), peer.c_str());
        }
    } else {
        std::printf("  NVLinks                not supported\n");
    }
    if (r.processes) {
        std::printf("  processes              %zu\n", r.processes->size());
        for (const auto& p : *r.processes)
            std::printf("    pid %-10u         %s\n", p.pid,
                        p.used_memory_bytes ? (std::to_string(*p.used_memory_bytes / (1024 * 1024)) + " MiB").c_str()
                                            : "memory not supported");
    } else {
        std::printf("  processes              not supported\n");
    }
}

// `devices --topology`: the matrix, the peer-to-peer status of each pair, each GPU's readings.
int print_topology() {
    system::Topology topology;
    try {
        topology = system::topology();
    } catch (const Error& e) {
        std::fprintf(stderr, "cudacore devices --topology: %s\n", e.what());
        return 1;
    }
    std::printf("%s\n", system::format_topology_matrix(topology).c_str());
    for (std::size_t i = 0; i < topology.links.size(); ++i)
        for (std::size_t j = 0; j < topology.links.size(); ++j) {
            if (i == j) continue;
            const auto& link = topology.links[i][j];
            std::printf("GPU%zu -> GPU%zu: %s, %u NVLinks, P2P read %s, write %s, atomics %s, over NVLink %s\n", i, j,
                        link.level ? system::topology_level_name(*link.level) : "level not supported",
                        link.nvlinks, yes_no(link.peer.read).c_str(), yes_no(link.peer.write).c_str(),
                        yes_no(link.peer.atomics).c_str(), yes_no(link.peer.nvlink).c_str());
        }
    std::printf("\n");
    for (std::size_t i = 0; i < topology.links.size(); ++i) print_gpu_readings(i, topology);
    return 0;
}

}  // namespace

void add_devices_command(CLI::App& app) {
    auto* command = app.add_subcommand("devices", "List CUDA devices and their properties");
    auto all = std::make_shared<bool>(false);
    command->add_flag("--all", *all, "Print every device attribute");
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "Print JSON (for scripts) instead of text");
    auto topology = std::make_shared<bool>(false);
    command->add_flag("--topology", *topology,
                      "Print the links between GPUs (like nvidia-smi topo -m) and each GPU's readings");
    command->callback([all, json, topology] {
        if (*json) return print_json(*all);
        if (*topology) {
            if (const int rc = print_topology(); rc != 0) throw CLI::RuntimeError(rc);
            return;
        }
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
