/// @file
/// LegacyPinnedMemoryResource: page-locked host memory (cuMemHostAlloc), portable and mapped,
/// so copies run at full DMA speed and kernels may read it directly.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/context.hpp"
#include "cudacore/memory_resource.hpp"

#include <memory>

namespace cudacore {

class Device;

/// Page-locked host memory, visible to the devices; allocation immediate, freeing after its
/// stream. Holds the context it allocates through. Thread-safe.
class LegacyPinnedMemoryResource final : public BuiltinMemoryResource<true, true> {
public:
    /// Allocates through `device`'s primary context. NoDriverError without a driver.
    explicit LegacyPinnedMemoryResource(const Device& device);
    /// Allocates through `context`, which the resource and its buffers hold.
    explicit LegacyPinnedMemoryResource(const Context& context);
    /// Device 0.
    LegacyPinnedMemoryResource();
    ~LegacyPinnedMemoryResource() override;

    /// -1: pinned memory is bound to no device (as cuda.core reports).
    int device_ordinal() const noexcept override { return -1; }
    /// The device whose context allocates the memory.
    int allocating_device_ordinal() const noexcept { return ordinal_; }
    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    Context context_;
};

}  // namespace cudacore
