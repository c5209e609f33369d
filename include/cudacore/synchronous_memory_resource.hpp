/// @file
/// SynchronousMemoryResource: device memory from cuMemAlloc / cuMemFree, for devices without
/// stream-ordered memory pools.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/owning_handle.hpp"
#include "cudacore/memory_resource.hpp"

#include <memory>

namespace cudacore {

class Context;
class Device;

/// Device memory from cuMemAlloc / cuMemFree. Allocation is immediate; freeing waits for its
/// stream. Make it with std::make_shared; it holds the context it allocates in. Thread-safe.
class SynchronousMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    /// In `device`'s primary context. Throws NoDriverError without a driver.
    explicit SynchronousMemoryResource(const Device& device);
    /// Allocates in `context`, which the resource and its buffers hold.
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
