/// @file
/// A CUDA device: its properties, its primary context, and the factories for streams and events.
#pragma once

#include "cudacore/context.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/event.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/system_info.hpp"

#include <cuda.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cudacore {

// Include cudacore/buffer.hpp and memory_resource.hpp to use memory_resource() and allocate().
class Buffer;
class MemoryResource;
class DeviceMemoryResource;

/// A device's compute capability (major, minor).
struct ComputeCapability {
    int major = 0;  ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (9 for an H100)
    int minor = 0;  ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    bool operator==(const ComputeCapability&) const = default;  ///< equal when every field is
};

/// A device's memory as the driver counts it (cuMemGetInfo), in bytes.
struct DeviceMemoryInfo {
    std::size_t free_bytes = 0;   ///< free now, for every process on the device
    std::size_t total_bytes = 0;  ///< the device's memory (as total_memory())
};

/// A GPU, by ordinal: a plain value; properties need no context. Thread-safe. Members throw
/// NoDriverError without a driver, DriverError when a call fails.
class Device {
public:
    explicit Device(int ordinal = 0);  ///< InvalidArgumentError when ordinal is not in [0, count())

    /// The device of the calling thread's current context, or device 0 when none is current.
    static Device current();
    /// The device a driver handle stands for; InvalidArgumentError when none has it.
    static Device from_handle(CUdevice device);
    /// The device with this PCI bus id ("0000:18:00.0"); InvalidArgumentError when none has it.
    static Device from_pci_bus_id(const std::string& pci_bus_id);

    static int count();  ///< how many devices the driver reports
    static std::vector<Device> all();  ///< every device, Device(0) to Device(count() - 1)

    /// The device's ordinal (0-based, as CUDA_VISIBLE_DEVICES numbers them).
    int ordinal() const noexcept { return ordinal_; }
    CUdevice handle() const noexcept { return handle_; }  ///< the driver's device

    std::string name() const;  ///< the product name ("NVIDIA H100 80GB HBM3")
    std::array<unsigned char, 16> uuid() const;  ///< the 16 bytes of the device's UUID
    std::string uuid_string() const;  ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    std::string pci_bus_id() const;  ///< PCI bus id ("0000:18:00.0")
    ComputeCapability compute_capability() const;  ///< compute capability, asked once per device
    std::string arch() const;  ///< "sm_90"
    std::size_t total_memory() const;  ///< device memory in bytes
    /// Free and total device memory from the driver (not NVML).
    DeviceMemoryInfo memory_info() const;
    int multiprocessor_count() const;  ///< number of streaming multiprocessors
    int attribute(CUdevice_attribute attribute) const;  ///< one attribute (cuDeviceGetAttribute)
    /// Every attribute the driver accepts, by name without prefix ("max_threads_per_block").
    std::map<std::string, int> attributes() const;
    /// Every attribute as a typed member, read once per device (valid for the process's life).
    const DeviceProperties& properties() const;

    /// This GPU as NVML sees it; LoaderError when NVML is absent.
    system::SystemDevice system_device() const;

    /// The primary context, retained from its first use until the process exits.
    Context context() const;
    Context set_current() const;  ///< makes the primary context current on the calling thread
    void sync() const;  ///< waits for all work on the device's primary context
    /// Whether this device can reach `peer`'s memory.
    bool can_access_peer(const Device& peer) const;
    /// Lets this device's primary context reach `peer`'s memory; holds both while enabled.
    void enable_peer_access(const Device& peer) const;
    /// Undoes enable_peer_access, letting go of the two contexts; does nothing when not enabled.
    void disable_peer_access(const Device& peer) const;
    /// Whether peer access to `peer` was enabled through cudacore (true for the device itself).
    bool is_peer_access_enabled(const Device& peer) const;

    /// The legacy default stream of the primary context, which it makes current.
    Stream default_stream() const;
    /// The calling thread's per-thread default stream of the primary context.
    Stream per_thread_stream() const;
    /// A new stream on the primary context, which it holds; InvalidArgumentError: bad priority.
    Stream create_stream(const StreamOptions& options = {}) const;
    /// A new event, not recorded yet.
    Event create_event(const EventOptions& options = {}) const;

    /// The device's default memory resource, kept for the process's life.
    std::shared_ptr<MemoryResource> memory_resource() const;
    /// memory_resource() as a DeviceMemoryResource; InvalidArgumentError without memory pools.
    std::shared_ptr<DeviceMemoryResource> memory_pool_resource() const;
    /// `size` bytes from memory_resource(), ordered on `stream`.
    Buffer allocate(std::size_t size, const Stream& stream) const;

    /// The same device.
    bool operator==(const Device& other) const noexcept { return ordinal_ == other.ordinal_; }

private:
    int ordinal_;
    CUdevice handle_;
};

}  // namespace cudacore
