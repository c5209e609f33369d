/// @file
/// ManagedMemoryResource: unified memory usable from the host and every device, migrated on
/// demand or ahead of use with prefetch().
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

/// Advice applied to every allocation, so its pages start where they are wanted.
struct ManagedMemoryResourceOptions {
    /// Preferred location: a device, the host or a host NUMA node.
    std::optional<MemoryLocation> preferred_location{};
    bool read_mostly = false;  ///< CU_MEM_ADVISE_SET_READ_MOSTLY
    /// Who may reach a new allocation: global or host (single is refused: use attach()).
    ManagedAttach attach = ManagedAttach::global;
};

/// Managed memory for the host and the devices; allocation immediate, freeing after its stream.
/// Holds its device's primary context. Thread-safe.
class ManagedMemoryResource final : public BuiltinMemoryResource<true, true, true> {
public:
    /// With advice and the attachment applied to each allocation.
    ManagedMemoryResource(const Device& device, const ManagedMemoryResourceOptions& options);
    /// Allocates through `device`'s primary context. NoDriverError without a driver.
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

/// Migrates a managed buffer's pages to `location` on `stream`. InvalidArgumentError,
/// DriverError (no concurrent managed access). Keeps nothing alive; thread-safe.
void prefetch(const Buffer& buffer, const MemoryLocation& location, const Stream& stream);

/// The earlier form with a Device.
[[deprecated("use prefetch(buffer, MemoryLocation::device(device.ordinal()), stream)")]]
void prefetch(const Buffer& buffer, const Device& device, const Stream& stream);
/// The earlier form for host memory.
[[deprecated("use prefetch(buffer, MemoryLocation::host(), stream)")]]
void prefetch_to_host(const Buffer& buffer, const Stream& stream);

}  // namespace cudacore
