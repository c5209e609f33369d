// SystemDevice's readings that a GPU may not support (ECC, processes, NVLinks, everything at
// once): each is an empty optional when unsupported, so one query answers for every GPU.
#include "cudacore/system_info.hpp"
#include "cudacore/system_topology.hpp"

#include "cudacore/errors.hpp"
#include "loader/nvml_api.hpp"

namespace cudacore::system {

#ifdef CUDACORE_HAVE_NVML
namespace {

nvmlDevice_t nvml_handle(void* handle) { return static_cast<nvmlDevice_t>(handle); }

std::string reading_object(void* handle) {
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (detail::nvml().nvmlDeviceGetUUID(nvml_handle(handle), uuid, sizeof uuid) == NVML_SUCCESS)
        return std::string("device ") + uuid;
    return "NVML device";
}

// True on success, false when not supported; throws for any other failure.
bool reading_supported(nvmlReturn_t status, const char* call, void* handle) {
    if (status == NVML_SUCCESS) return true;
    if (detail::nvml_not_supported(status)) return false;
    detail::check_nvml(status, call, reading_object(handle));
    return false;
}

// One throwing reading as an optional: empty when NVML says "not supported".
template <class Read>
auto optional_reading(Read read) -> std::optional<decltype(read())> {
    try {
        return read();
    } catch (const NvmlError& e) {
        if (detail::nvml_not_supported(static_cast<nvmlReturn_t>(e.status()))) return std::nullopt;
        throw;
    }
}

std::optional<std::uint64_t> ecc_count(void* handle, nvmlMemoryErrorType_t type,
                                       nvmlEccCounterType_t counter) {
    const auto& api = detail::nvml();
    unsigned long long count = 0;
    if (!api.nvmlDeviceGetTotalEccErrors ||
        !reading_supported(api.nvmlDeviceGetTotalEccErrors(nvml_handle(handle), type, counter, &count),
                   "nvmlDeviceGetTotalEccErrors", handle))
        return std::nullopt;
    return count;
}

}  // namespace

EccReport SystemDevice::ecc() const {
    const auto& api = detail::nvml();
    EccReport report;
    nvmlEnableState_t current{}, pending{};
    if (api.nvmlDeviceGetEccMode &&
        reading_supported(api.nvmlDeviceGetEccMode(nvml_handle(handle_), &current, &pending),
                  "nvmlDeviceGetEccMode", handle_)) {
        report.enabled = current == NVML_FEATURE_ENABLED;
        report.pending = pending == NVML_FEATURE_ENABLED;
    }
    report.corrected_volatile = ecc_count(handle_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC);
    report.uncorrected_volatile =
        ecc_count(handle_, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC);
    report.corrected_aggregate =
        ecc_count(handle_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC);
    report.uncorrected_aggregate =
        ecc_count(handle_, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC);
    return report;
}

std::optional<std::vector<GpuProcess>> SystemDevice::processes() const {
    const auto& api = detail::nvml();
    if (!api.nvmlDeviceGetComputeRunningProcesses_v3) return std::nullopt;
    // The list can grow between the two calls: ask again with the new size until it fits.
    std::vector<nvmlProcessInfo_t> infos(8);
    for (;;) {
        unsigned count = static_cast<unsigned>(infos.size());
        const nvmlReturn_t status =
            api.nvmlDeviceGetComputeRunningProcesses_v3(nvml_handle(handle_), &count, infos.data());
        if (status == NVML_ERROR_INSUFFICIENT_SIZE) {
            infos.resize(count + 8);
            continue;
        }
        if (!reading_supported(status, "nvmlDeviceGetComputeRunningProcesses_v3", handle_)) return std::nullopt;
        std::vector<GpuProcess> out;
        for (unsigned i = 0; i < count; ++i) {
            GpuProcess process;
            process.pid = infos[i].pid;
            if (infos[i].usedGpuMemory != static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE))
                process.used_memory_bytes = infos[i].usedGpuMemory;
            out.push_back(process);
        }
        return out;
    }
}

std::optional<std::vector<NvLink>> SystemDevice::nvlinks() const {
    const auto& api = detail::nvml();
    if (!api.nvmlDeviceGetNvLinkState || !api.nvmlDeviceGetNvLinkRemotePciInfo_v2) return std::nullopt;
    std::vector<std::string> bus_ids;  // of every GPU, to name the other end by NVML index
    for (const SystemDevice& device : all()) bus_ids.push_back(device.pci_bus_id());
    std::vector<NvLink> links;
    bool any = false;
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
        nvmlEnableState_t state{};
        const nvmlReturn_t status = api.nvmlDeviceGetNvLinkState(nvml_handle(handle_), link, &state);
        // Links past the GPU's count answer "invalid argument" or "not supported".
        if (status == NVML_ERROR_INVALID_ARGUMENT || detail::nvml_not_supported(status)) continue;
        detail::check_nvml(status, "nvmlDeviceGetNvLinkState", reading_object(handle_));
        any = true;
        NvLink entry;
        entry.link = link;
        entry.active = state == NVML_FEATURE_ENABLED;
        nvmlPciInfo_t pci{};
        if (entry.active &&
            api.nvmlDeviceGetNvLinkRemotePciInfo_v2(nvml_handle(handle_), link, &pci) == NVML_SUCCESS) {
            entry.remote_pci_bus_id = pci.busId;
            if (auto index = find_pci_bus_id(bus_ids, entry.remote_pci_bus_id))
                entry.remote_index = static_cast<unsigned>(*index);
        }
        nvmlIntNvLinkDeviceType_t remote_type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
        if (entry.active && api.nvmlDeviceGetNvLinkRemoteDeviceType &&
            api.nvmlDeviceGetNvLinkRemoteDeviceType(nvml_handle(handle_), link, &remote_type) == NVML_SUCCESS)
            entry.to_switch = remote_type == NVML_NVLINK_DEVICE_TYPE_SWITCH;
        links.push_back(entry);
    }
    if (!any) return std::nullopt;
    return links;
}

SystemReadings SystemDevice::readings() const {
    SystemReadings r;
    r.memory = optional_reading([&] { return memory(); });
    r.utilization = optional_reading([&] { return utilization(); });
    r.temperature_celsius = optional_reading([&] { return temperature_celsius(); });
    r.power_watts = optional_reading([&] { return power_watts(); });
    r.power_limit_watts = optional_reading([&] { return power_limit_watts(); });
    const auto& api = detail::nvml();
    auto clock = [&](auto function, const char* call, nvmlClockType_t type) -> std::optional<unsigned> {
        unsigned mhz = 0;
        if (!reading_supported(function(nvml_handle(handle_), type, &mhz), call, handle_))
            return std::nullopt;
        return mhz;
    };
    r.sm_mhz = clock(api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", NVML_CLOCK_SM);
    r.memory_mhz = clock(api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", NVML_CLOCK_MEM);
    r.max_sm_mhz = clock(api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM);
    r.max_memory_mhz =
        clock(api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_MEM);
    r.ecc = ecc();
    r.processes = processes();
    r.nvlinks = nvlinks();
    return r;
}

#else  // built without nvml.h

namespace {
[[noreturn]] void readings_unavailable() {
    throw LoaderError("NVML (libnvidia-ml.so.1)", {}, "",
                      "cudacore was built without nvml.h (run scripts/setup.sh, which installs "
                      "the nvidia-nvml-dev package, and rebuild)");
}
}  // namespace

EccReport SystemDevice::ecc() const { readings_unavailable(); }
std::optional<std::vector<GpuProcess>> SystemDevice::processes() const { readings_unavailable(); }
std::optional<std::vector<NvLink>> SystemDevice::nvlinks() const { readings_unavailable(); }
SystemReadings SystemDevice::readings() const { readings_unavailable(); }
#endif

}  // namespace cudacore::system
