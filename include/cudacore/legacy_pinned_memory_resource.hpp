/// @file
/// LegacyPinnedMemoryResource: page-locked host memory (cuMemHostAlloc), portable to every context and
/// mapped into the device address space, so copies from it run at full DMA speed and overlap with
/// kernels, and kernels may read it directly.
///
/// Allocation is immediate (not stream-ordered). Freeing waits for the stream it is ordered on
/// (the buffer's stream, or close(stream)'s) before cuMemFreeHost, so pending copies never read
/// freed memory. Holds the context it allocates through (a device's primary context, or the one
/// given). Create it with
/// std::make_shared. Thread-safe.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/context.hpp"
#include "cudacore/memory_resource.hpp"

#include <memory>

namespace cudacore {

class Device;

/// Page-locked host memory (cuMemAllocHost), visible to the devices.
class LegacyPinnedMemoryResource final : public BuiltinMemoryResource<true, true> {
public:
    /// Allocates through the primary context of `device` (the memory itself is usable from all).
    /// Throws NoDriverError without a driver.
    explicit LegacyPinnedMemoryResource(const Device& device);
    /// Allocates through `context` (a created context, say), which the resource and its buffers
    /// hold; the memory is usable from every context. InvalidArgumentError for a closed Context.
    explicit LegacyPinnedMemoryResource(const Context& context);
    /// Device 0.
    LegacyPinnedMemoryResource();
    ~LegacyPinnedMemoryResource() override;

    /// -1: pinned memory is bound to no device (as cuda.core reports); it is usable from all.
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
