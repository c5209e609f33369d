/// @file
/// A CUDA device: its properties, its primary context, and the factories for streams and events.
///
/// Device is a small value (an ordinal); copying it is free. Querying properties needs no
/// context. Everything throws NoDriverError when no driver is present and DriverError when a
/// driver call fails.
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
    /// The device with this PCI bus id (cuDeviceGetByPCIBusId), in any form the driver takes:
    /// "[domain]:[bus]:[device].[function]", "[domain]:[bus]:[device]" or "[bus]:[device].[function]"
    /// in hexadecimal ("0000:18:00.0", as pci_bus_id() gives). Throws InvalidArgumentError for an
    /// id that is empty, longer than 64 characters or has characters other than hex digits, ':'
    /// and '.' (checked before the driver), and for an id no device has (naming it).
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
    /// Lets kernels and copies on this device's primary context reach memory of `peer`'s primary
    /// context (cuCtxEnablePeerAccess). Idempotent: enabling twice, or disabling what is not
    /// enabled, does nothing; a device always reaches its own memory. Throws DriverError with
    /// CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, naming both devices, when the hardware refuses. Both
    /// primary contexts stay retained while access is enabled. Memory pools are not affected:
    /// see DeviceMemoryResource::set_peer_accessible_by. Thread-safe.
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
    /// context (set current, as for default_stream). Work on it does not synchronise with other
    /// threads' per-thread streams; it synchronises with the legacy default stream. Each call
    /// returns a new Stream object for the same driver stream (copies share host-function
    /// errors; separate calls do not). Never destroyed.
    Stream per_thread_stream() const;
    /// A new stream on the primary context (cuStreamCreateWithPriority), which it holds; destroyed
    /// when its last holder goes. InvalidArgumentError for a priority outside the device's range,
    /// DriverError when the driver refuses.
    Stream create_stream(const StreamOptions& options = {}) const;
    /// Creates an event that is not recorded on any stream yet: record it with stream.record(ev).
    Event create_event(const EventOptions& options = {}) const;

    /// The device's default memory resource: one DeviceMemoryResource per device on its default
    /// memory pool, created on first use and kept for the life of the process (so it holds the
    /// primary context from then on). A device without memory pools
    /// (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED 0) gets a SynchronousMemoryResource instead.
    std::shared_ptr<MemoryResource> memory_resource() const;
    /// memory_resource() typed as what it is on a device with memory pools: the
    /// DeviceMemoryResource of its default pool (the same object), whose release threshold and
    /// access list are reached without a cast. Include cudacore/device_memory_resource.hpp to use
    /// it. Throws InvalidArgumentError on a device without memory pools, naming the
    /// SynchronousMemoryResource that memory_resource() is there. Thread-safe.
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
