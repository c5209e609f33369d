/// @file
/// A CUDA device: its properties, its primary context, and the factories for streams and events.
/// A small value (an ordinal); properties need no context. Throws NoDriverError without a
/// driver, DriverError when a call fails.
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

// The memory layer's (cudacore/buffer.hpp, cudacore/memory_resource.hpp): include those to use
// memory_resource() and allocate().
class Buffer;
class MemoryResource;
class DeviceMemoryResource;

/// A device's compute capability (major, minor).
struct ComputeCapability {
    int major = 0;  ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (9 for an H100)
    int minor = 0;  ///< CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
    /// Equal when every field is.
    bool operator==(const ComputeCapability&) const = default;
};

/// A device's memory as the driver counts it (cuMemGetInfo), in bytes.
struct DeviceMemoryInfo {
    std::size_t free_bytes = 0;   ///< free now, for every process on the device
    std::size_t total_bytes = 0;  ///< the device's memory (as total_memory())
};

/// A GPU, by ordinal: a plain value.
class Device {
public:
    /// Throws InvalidArgumentError when ordinal is not in [0, device_count()).
    explicit Device(int ordinal = 0);

    /// The device of the calling thread's current context, or device 0 when none is current.
    static Device current();
    /// The device a driver handle (cuDeviceGet, cuCtxGetDevice) stands for. Device is a value:
    /// nothing is owned. Throws InvalidArgumentError when no device has that handle.
    static Device from_handle(CUdevice device);
    /// The device with this PCI bus id ("0000:18:00.0", or any form cuDeviceGetByPCIBusId takes).
    /// Throws InvalidArgumentError for a malformed id (checked first) or one no device has.
    static Device from_pci_bus_id(const std::string& pci_bus_id);

    /// How many devices the driver reports, and all of them in ordinal order (none without a
    /// device; NoDriverError without a driver).
    static int count();
    /// Every device, Device(0) to Device(count() - 1).
    static std::vector<Device> all();

    /// The device's ordinal (0-based, as CUDA_VISIBLE_DEVICES numbers them).
    int ordinal() const noexcept { return ordinal_; }
    /// The driver's device (cuDeviceGet).
    CUdevice handle() const noexcept { return handle_; }

    /// The product name (cuDeviceGetName: "NVIDIA H100 80GB HBM3").
    std::string name() const;
    /// The 16 bytes of the device's UUID (cuDeviceGetUuid).
    std::array<unsigned char, 16> uuid() const;
    std::string uuid_string() const;  ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
    /// PCI bus id as the driver gives it (cuDeviceGetPCIBusId: "0000:18:00.0").
    std::string pci_bus_id() const;
    /// Compute capability, asked once per device and cached (thread-safe).
    ComputeCapability compute_capability() const;
    std::string arch() const;  ///< "sm_90"
    /// Device memory in bytes (cuDeviceTotalMem).
    std::size_t total_memory() const;
    /// Free and total device memory from the driver (cuMemGetInfo in the device's primary
    /// context, made current for the call), not NVML. DriverError when the driver fails.
    DeviceMemoryInfo memory_info() const;
    /// Number of streaming multiprocessors (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).
    int multiprocessor_count() const;
    /// One attribute (cuDeviceGetAttribute); DriverError for one this driver rejects.
    int attribute(CUdevice_attribute attribute) const;
    /// Every attribute the driver reports, by its CU_DEVICE_ATTRIBUTE_ name (without the prefix,
    /// lower case: "max_threads_per_block"). Attributes this driver rejects are left out.
    std::map<std::string, int> attributes() const;
    /// Every attribute as a typed member, read on first call and cached per device (the
    /// reference stays valid for the life of the process; thread-safe).
    const DeviceProperties& properties() const;

    /// This GPU as NVML sees it (matched by UUID): utilisation, temperature, power, clocks.
    /// Throws LoaderError when NVML is absent (see system_info.hpp).
    system::SystemDevice system_device() const;

    /// The primary context, retained from its first use until the process exits (context.hpp).
    Context context() const;
    /// Makes the primary context current on the calling thread; it stays retained for the life of
    /// the process, so the thread's current context never dangles.
    Context set_current() const;
    /// Waits for all work on the device's primary context.
    void sync() const;
    /// Whether this device can reach `peer`'s memory (cuDeviceCanAccessPeer).
    bool can_access_peer(const Device& peer) const;
    /// Lets this device's primary context reach `peer`'s memory (cuCtxEnablePeerAccess);
    /// idempotent, holds both contexts while enabled; memory pools are apart
    /// (DeviceMemoryResource::set_peer_accessible_by). Throws DriverError naming both devices when
    /// the hardware refuses. Thread-safe.
    void enable_peer_access(const Device& peer) const;
    /// Undoes enable_peer_access (cuCtxDisablePeerAccess) and lets go of the two primary contexts
    /// it kept retained. Does nothing for the device itself, for a peer it cannot reach, or when
    /// access is not enabled. DriverError for other failures. Thread-safe.
    void disable_peer_access(const Device& peer) const;
    /// Whether peer access to `peer` was enabled through cudacore in this process (the driver has
    /// no query); true for the device itself.
    bool is_peer_access_enabled(const Device& peer) const;

    /// The legacy default stream of the primary context (sets that context current, since the
    /// default stream always means the calling thread's current context).
    Stream default_stream() const;
    /// The calling thread's per-thread default stream (CU_STREAM_PER_THREAD) of the primary
    /// context; a new Stream object each call, never destroyed.
    Stream per_thread_stream() const;
    /// A new stream on the primary context (cuStreamCreateWithPriority), which it holds; destroyed
    /// when its last holder goes. InvalidArgumentError for a priority outside the device's range,
    /// DriverError when the driver refuses.
    Stream create_stream(const StreamOptions& options = {}) const;
    /// Creates an event that is not recorded on any stream yet: record it with stream.record(ev).
    Event create_event(const EventOptions& options = {}) const;

    /// The device's default memory resource, kept for the process's life: a DeviceMemoryResource
    /// on the default pool, or a SynchronousMemoryResource without memory pools.
    std::shared_ptr<MemoryResource> memory_resource() const;
    /// memory_resource() as the DeviceMemoryResource it is (device_memory_resource.hpp). Throws
    /// InvalidArgumentError on a device without memory pools. Thread-safe.
    std::shared_ptr<DeviceMemoryResource> memory_pool_resource() const;
    /// `size` bytes of device memory from memory_resource(), ordered on `stream` (see
    /// MemoryResource::allocate for what it throws).
    Buffer allocate(std::size_t size, const Stream& stream) const;

    /// The same object (identity.hpp says how each type compares).
    bool operator==(const Device& other) const noexcept { return ordinal_ == other.ordinal_; }

private:
    int ordinal_;
    CUdevice handle_;
};

}  // namespace cudacore
