/// @file
/// System information through NVML (opened at run time): the driver version and, per GPU, its
/// UUID, PCI bus id, memory, utilisation, temperature, power and clocks, read anew each time.
/// Without NVML every call throws LoaderError (nvml_available() asks); NvmlError when NVML fails
/// or a single reading is not supported (readings(), ecc()... give empty optionals instead).
/// Thread-safe. Topology: system_topology.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudacore::system {

/// NVML loads and initialises (false also when cudacore was built without nvml.h).
bool nvml_available() noexcept;
/// The driver version as NVML reports it ("580.159.04").
std::string nvml_driver_version();

/// A device's memory use, from NVML.
struct MemoryUsage {
    std::uint64_t total_bytes = 0;  ///< installed memory, bytes (nvmlMemory_t::total)
    std::uint64_t used_bytes = 0;   ///< allocated by processes or reserved by the driver, bytes (used)
    std::uint64_t free_bytes = 0;   ///< not allocated, bytes (free)
};

/// A device's utilisation, from NVML.
struct Utilization {
    unsigned gpu_percent = 0;     ///< time a kernel ran over the last sample period
    unsigned memory_percent = 0;  ///< time device memory was read or written
};

/// A device's current clocks, from NVML.
struct Clocks {
    unsigned sm_mhz = 0;          ///< SM clock now, MHz (NVML_CLOCK_SM)
    unsigned memory_mhz = 0;      ///< memory clock now, MHz (NVML_CLOCK_MEM)
    unsigned graphics_mhz = 0;    ///< graphics clock now, MHz (NVML_CLOCK_GRAPHICS)
    unsigned max_sm_mhz = 0;      ///< highest SM clock, MHz (nvmlDeviceGetMaxClockInfo)
    unsigned max_memory_mhz = 0;  ///< highest memory clock, MHz (nvmlDeviceGetMaxClockInfo)
};

/// ECC mode and error counts; each field is empty when the GPU or driver does not report it.
struct EccReport {
    std::optional<bool> enabled{};  ///< ECC on now (nvmlDeviceGetEccMode, current)
    std::optional<bool> pending{};  ///< ECC on after the next reboot (nvmlDeviceGetEccMode, pending)
    /// Corrected errors since the driver loaded (NVML_VOLATILE_ECC).
    std::optional<std::uint64_t> corrected_volatile{};
    /// Uncorrected errors since the driver loaded (NVML_VOLATILE_ECC).
    std::optional<std::uint64_t> uncorrected_volatile{};
    /// Corrected errors over the GPU's life (NVML_AGGREGATE_ECC).
    std::optional<std::uint64_t> corrected_aggregate{};
    /// Uncorrected errors over the GPU's life (NVML_AGGREGATE_ECC).
    std::optional<std::uint64_t> uncorrected_aggregate{};
};

/// A compute process running on a GPU (nvmlDeviceGetComputeRunningProcesses_v3).
struct GpuProcess {
    unsigned pid = 0;  ///< operating-system process id (of the host's pid namespace)
    /// Device memory the process holds, bytes; empty when NVML cannot tell (inside a container,
    /// under some virtualisation).
    std::optional<std::uint64_t> used_memory_bytes{};
};

/// One NVLink of a GPU and what is at its other end.
struct NvLink {
    unsigned link = 0;    ///< the link's number on this GPU (0 .. NVML_NVLINK_MAX_LINKS-1)
    bool active = false;  ///< the link is up (nvmlDeviceGetNvLinkState)
    /// PCI bus id of the other end, NVML's form ("00000000:19:00.0"); empty when not readable
    /// (an inactive link).
    std::string remote_pci_bus_id{};
    /// NVML index of the GPU at the other end; empty when the other end is not a GPU NVML sees
    /// (an NVSwitch, say).
    std::optional<unsigned> remote_index{};
    /// The other end is an NVSwitch (nvmlDeviceGetNvLinkRemoteDeviceType): the link reaches
    /// every GPU on the same switch fabric (HGX boards), not one GPU.
    bool to_switch = false;
};

/// Every reading of one GPU at once; a reading the GPU or driver does not support is empty.
struct SystemReadings {
    std::optional<MemoryUsage> memory{};        ///< memory()
    std::optional<Utilization> utilization{};   ///< utilization()
    std::optional<int> temperature_celsius{};   ///< temperature_celsius()
    std::optional<double> power_watts{};        ///< power_watts()
    std::optional<double> power_limit_watts{};  ///< power_limit_watts()
    std::optional<unsigned> sm_mhz{};           ///< SM clock now, MHz
    std::optional<unsigned> memory_mhz{};       ///< memory clock now, MHz
    std::optional<unsigned> max_sm_mhz{};       ///< highest SM clock, MHz
    std::optional<unsigned> max_memory_mhz{};   ///< highest memory clock, MHz
    EccReport ecc{};                            ///< ecc()
    std::optional<std::vector<GpuProcess>> processes{};  ///< processes()
    std::optional<std::vector<NvLink>> nvlinks{};        ///< nvlinks()
};

/// A device as NVML sees it: name, temperature, power, utilisation, memory.
class SystemDevice {
public:
    /// NVML's device count (all GPUs, whatever CUDA_VISIBLE_DEVICES says).
    static unsigned count();
    /// Throws InvalidArgumentError when index >= count().
    static SystemDevice at(unsigned index);
    /// By "GPU-xxxxxxxx-..." UUID; throws NvmlError (NVML_ERROR_NOT_FOUND) when none has it.
    static SystemDevice with_uuid(const std::string& uuid);
    /// Every device NVML sees, in NVML's index order.
    static std::vector<SystemDevice> all();

    /// The product name ("NVIDIA H100 80GB HBM3").
    std::string name() const;
    std::string uuid() const;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    std::string pci_bus_id() const;  ///< "00000000:18:00.0" (NVML's form: 8-digit domain)
    /// Memory use now (nvmlDeviceGetMemoryInfo).
    MemoryUsage memory() const;
    /// Utilisation over NVML's last sample period (nvmlDeviceGetUtilizationRates).
    Utilization utilization() const;
    int temperature_celsius() const;  ///< GPU die
    double power_watts() const;        ///< current draw
    double power_limit_watts() const;  ///< enforced limit
    /// Current and highest clocks (five NVML readings, each of which may throw NvmlError).
    Clocks clocks() const;


    /// ECC mode and error counts; fields the GPU does not report are empty. Throws NvmlError only
    /// for failures other than "not supported" (a GPU that fell off the bus, say).
    EccReport ecc() const;
    /// The compute processes on this GPU with the memory each holds; empty when the driver
    /// cannot list them. Throws NvmlError as ecc() does.
    std::optional<std::vector<GpuProcess>> processes() const;
    /// Every NVLink NVML reports for this GPU (active or not), with the GPU at the other end
    /// found by PCI bus id; empty when the GPU has no NVLink or the driver cannot tell. Throws
    /// NvmlError as ecc() does.
    std::optional<std::vector<NvLink>> nvlinks() const;
    /// Every reading at once, each empty when not supported. Throws NvmlError as ecc() does.
    SystemReadings readings() const;

    /// NVML's nvmlDevice_t.
    void* handle() const noexcept { return handle_; }
    /// The same GPU (the same NVML handle).
    bool operator==(const SystemDevice& other) const noexcept { return handle_ == other.handle_; }

private:
    explicit SystemDevice(void* handle) : handle_(handle) {}
    void* handle_;
};

}  // namespace cudacore::system
