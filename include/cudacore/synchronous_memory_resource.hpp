/// @file
/// SynchronousMemoryResource: device memory from cuMemAlloc / cuMemFree, for devices without
/// stream-ordered memory pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0), where
/// Device::allocate falls back to it.
///
/// Allocation is immediate (not stream-ordered); freeing waits for the stream it is ordered on
/// (the buffer's, or close(stream)'s), then calls cuMemFree. Holds the context it allocates in
/// (its device's primary context, or the one given). Create it with std::make_shared. Thread-safe.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/forward.hpp"
#include "cudacore/memory_resource.hpp"

#include <memory>

namespace cudacore {

class Context;
class Device;

/// Device memory from cuMemAlloc / cuMemFree, for devices without memory pools.
class SynchronousMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    /// Throws NoDriverError without a driver.
    explicit SynchronousMemoryResource(const Device& device);
    /// Allocates in `context` (a created context, say), which the resource and its buffers hold:
    /// the memory belongs to that context (CU_POINTER_ATTRIBUTE_CONTEXT). Throws
    /// InvalidArgumentError for a closed Context.
    explicit SynchronousMemoryResource(const Context& context);
    ~SynchronousMemoryResource() override;

    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    friend struct detail::BoxAccess;
    std::shared_ptr<detail::ContextBox> context_;
};

}  // namespace cudacore
