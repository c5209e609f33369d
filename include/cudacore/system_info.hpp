/// @file
/// System information through NVML, read anew each time. Topology: system_topology.hpp.
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

/// A device's memory use, in bytes.
struct MemoryUsage {
    std::uint64_t total_bytes = 0;  ///< installed memory, bytes (nvmlMemory_t::total)
    std::uint64_t used_bytes = 0;   ///< allocated by processes or reserved by the driver
    std::uint64_t free_bytes = 0;   ///< not allocated, bytes (free)
};

/// A device's utilisation.
struct Utilization {
    unsigned gpu_percent = 0;     ///< time a kernel ran over the last sample period
    unsigned memory_percent = 0;  ///< time device memory was read or written
};

/// A device's current clocks, MHz.
struct Clocks {
    unsigned sm_mhz = 0;          ///< SM clock now, MHz (NVML_CLOCK_SM)
    unsigned memory_mhz = 0;      ///< memory clock now, MHz (NVML_CLOCK_MEM)
    unsigned graphics_mhz = 0;    ///< graphics clock now, MHz (NVML_CLOCK_GRAPHICS)
    unsigned max_sm_mhz = 0;      ///< highest SM clock, MHz (nvmlDeviceGetMaxClockInfo)
    unsigned max_memory_mhz = 0;  ///< highest memory clock, MHz (nvmlDeviceGetMaxClockInfo)
};

/// ECC mode and error counts; each empty when not reported.
struct EccReport {
    std::optional<bool> enabled{};  ///< ECC on now (nvmlDeviceGetEccMode, current)
    std::optional<bool> pending{};  ///< ECC on after the next reboot (nvmlDeviceGetEccMode, pending)
    std::optional<std::uint64_t> corrected_volatile{};     ///< since the driver loaded
    std::optional<std::uint64_t> uncorrected_volatile{};   ///< since the driver loaded
    std::optional<std::uint64_t> corrected_aggregate{};    ///< over the GPU's life
    std::optional<std::uint64_t> uncorrected_aggregate{};  ///< over the GPU's life
};

/// A compute process running on a GPU.
struct GpuProcess {
    unsigned pid = 0;  ///< operating-system process id (of the host's pid namespace)
    /// Device memory the process holds; empty when NVML cannot tell (containers).
    std::optional<std::uint64_t> used_memory_bytes{};
};

/// One NVLink of a GPU and what is at its other end.
struct NvLink {
    unsigned link = 0;    ///< the link's number on this GPU (0 .. NVML_NVLINK_MAX_LINKS-1)
    bool active = false;  ///< the link is up (nvmlDeviceGetNvLinkState)
    /// PCI bus id of the other end ("00000000:19:00.0"); empty when not readable.
    std::string remote_pci_bus_id{};
    /// NVML index of the GPU at the other end; empty when it is not a GPU (an NVSwitch).
    std::optional<unsigned> remote_index{};
    /// The other end is an NVSwitch: the link reaches every GPU on the fabric.
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

/// A device as NVML sees it. Every call throws LoaderError without NVML and NvmlError when NVML
/// fails or a reading is not supported (ecc(), processes(), nvlinks() and readings() give empty
/// values for those instead). Thread-safe.
class SystemDevice {
public:
    /// NVML's device count (all GPUs, whatever CUDA_VISIBLE_DEVICES says).
    static unsigned count();
    /// The device of that index; InvalidArgumentError when index >= count().
    static SystemDevice at(unsigned index);
    /// By "GPU-..." UUID; NvmlError (NVML_ERROR_NOT_FOUND) when none has it.
    static SystemDevice with_uuid(const std::string& uuid);
    /// Every device NVML sees, in NVML's index order.
    static std::vector<SystemDevice> all();

    /// The product name ("NVIDIA H100 80GB HBM3").
    std::string name() const;
    std::string uuid() const;        ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    std::string pci_bus_id() const;  ///< "00000000:18:00.0" (NVML's form: 8-digit domain)
    /// Memory use now.
    MemoryUsage memory() const;
    /// Utilisation over NVML's last sample period.
    Utilization utilization() const;
    int temperature_celsius() const;  ///< GPU die
    double power_watts() const;        ///< current draw
    double power_limit_watts() const;  ///< enforced limit
    /// Current and highest clocks.
    Clocks clocks() const;
    /// ECC mode and error counts.
    EccReport ecc() const;
    /// The compute processes on this GPU; empty when the driver cannot list them.
    std::optional<std::vector<GpuProcess>> processes() const;
    /// Every NVLink of this GPU (active or not), with the GPU at the other end; empty when none.
    std::optional<std::vector<NvLink>> nvlinks() const;
    /// Every reading at once.
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
