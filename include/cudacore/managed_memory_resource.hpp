/// @file
/// ManagedMemoryResource: unified memory (cuMemAllocManaged, attached globally), usable from the
/// host and every device, migrated on demand or ahead of use with prefetch().
///
/// Allocation is immediate (not stream-ordered). Freeing waits for the stream it is ordered on
/// before cuMemFree. Holds the primary context of the device it allocates through. Create it with
/// std::make_shared. Thread-safe.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/context.hpp"
#include "cudacore/managed_attach.hpp"
#include "cudacore/memory_location.hpp"
#include "cudacore/memory_resource.hpp"

#include <memory>
#include <optional>

namespace cudacore {

class Buffer;
class Device;
class Stream;

/// Advice applied to every allocation (cuMemAdvise), so its pages start where they are wanted.
struct ManagedMemoryResourceOptions {
    /// CU_MEM_ADVISE_SET_PREFERRED_LOCATION: a device, the host or a host NUMA node.
    std::optional<MemoryLocation> preferred_location{};
    /// CU_MEM_ADVISE_SET_READ_MOSTLY.
    bool read_mostly = false;
    /// Who may reach a new allocation: every stream (global, CU_MEM_ATTACH_GLOBAL) or the host
    /// only until attach() says otherwise (host, CU_MEM_ATTACH_HOST). single is refused here
    /// (InvalidArgumentError at construction): attach to a stream with attach().
    ManagedAttach attach = ManagedAttach::global;
};

/// Managed (unified) memory, accessible from the host and the devices.
class ManagedMemoryResource final : public BuiltinMemoryResource<true, true, true> {
public:
    /// With advice and the attachment applied to each allocation; a failing advice frees the
    /// memory and throws DriverError naming it.
    ManagedMemoryResource(const Device& device, const ManagedMemoryResourceOptions& options);
    /// Allocates through the primary context of `device`. Throws NoDriverError without a driver.
    explicit ManagedMemoryResource(const Device& device);
    /// Device 0.
    ManagedMemoryResource();
    ~ManagedMemoryResource() override;

    std::string description() const override;
    /// The options it was made with.
    const ManagedMemoryResourceOptions& options() const noexcept { return options_; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    Context context_;
    ManagedMemoryResourceOptions options_;
};

/// Migrates the pages of a managed buffer to `location` (a device, the host or a host NUMA node),
/// asynchronously on `stream` (cuMemPrefetchAsync): later work on that stream finds them there.
/// Host code may read after the stream has reached this point (stream.sync()). Takes a
/// MemoryLocation as prefetch_batch and advise do. Throws InvalidArgumentError for a closed buffer
/// or stream and for memory that is not managed ("not a managed-memory allocation", naming the
/// buffer), DriverError when the device cannot prefetch
/// (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0). An empty buffer of size 0 does nothing.
/// Keeps nothing alive; thread-safe.
void prefetch(const Buffer& buffer, const MemoryLocation& location, const Stream& stream);

/// The earlier form with a Device.
[[deprecated("use prefetch(buffer, MemoryLocation::device(device.ordinal()), stream)")]]
void prefetch(const Buffer& buffer, const Device& device, const Stream& stream);
/// The earlier form for host memory.
[[deprecated("use prefetch(buffer, MemoryLocation::host(), stream)")]]
void prefetch_to_host(const Buffer& buffer, const Stream& stream);

}  // namespace cudacore
