/// @file
/// System information through NVML (libnvidia-ml.so.1, installed with the driver): the driver
/// version and, per GPU, its UUID, PCI bus id, memory use, utilisation, temperature, power and
/// clocks. NVML is opened at run time on first use; when it is absent, every call here throws
/// LoaderError (NvmlError when NVML loads but fails), and nothing else in cudacore is affected.
/// nvml_available() asks without throwing.
///
/// SystemDevice is a small value (NVML's device handle, valid for the life of the process);
/// every reading is taken anew when asked for. Device::system_device() finds a CUDA device's
/// SystemDevice by UUID. Readings the GPU does not support throw NvmlError
/// (NVML_ERROR_NOT_SUPPORTED); thread-safe.
#pragma once

#include <cstdint>
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

    /// NVML's nvmlDevice_t.
    void* handle() const noexcept { return handle_; }
    /// The same GPU (the same NVML handle).
    bool operator==(const SystemDevice& other) const noexcept { return handle_ == other.handle_; }

private:
    explicit SystemDevice(void* handle) : handle_(handle) {}
    void* handle_;
};

}  // namespace cudacore::system
