// DeviceMemoryResource: stream-ordered device memory from a device's memory pool
// (cuMemAllocFromPoolAsync / cuMemFreeAsync).
//
// Memory is usable by work enqueued on the allocating stream after allocate(); other streams
// must wait for that stream first (stream.wait(other) or an event). Freed memory returns to the
// pool, which keeps up to its release threshold reserved for reuse across synchronisations (the
// rest goes back to the driver at the next synchronisation).
//
// The resource uses the device's default pool, which every DeviceMemoryResource of the device,
// and cuMemAllocAsync, share: setting the release threshold changes it for all of them. It holds
// the device's primary context (and through its buffers, so does all memory it handed out).
// Create it with std::make_shared. Thread-safe.
#pragma once

#include "cudacore/memory_resource.hpp"

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>

namespace cudacore {

namespace detail {
struct ContextBox;
}

class Device;

struct DeviceMemoryResourceOptions {
    // Bytes of freed memory the pool keeps reserved across synchronisations (applied to the
    // device's default pool). Empty: leave the pool's current setting.
    std::optional<std::uint64_t> release_threshold;
};

class DeviceMemoryResource final : public MemoryResource {
public:
    // The default pool of `device`. Throws NoDriverError / DriverError (a device without memory
    // pools gives CUDA_ERROR_NOT_SUPPORTED).
    explicit DeviceMemoryResource(const Device& device,
                                  const DeviceMemoryResourceOptions& options = {});
    ~DeviceMemoryResource() override;

    CUmemoryPool pool() const noexcept { return pool_; }

    void set_release_threshold(std::uint64_t bytes);
    std::uint64_t release_threshold() const;
    // Bytes in use by allocations (CU_MEMPOOL_ATTR_USED_MEM_CURRENT) and reserved from the driver
    // (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), for the whole pool.
    std::uint64_t used_memory() const;
    std::uint64_t reserved_memory() const;
    // Gives reserved memory beyond `bytes_to_keep` back to the driver (cuMemPoolTrimTo).
    void trim_to(std::size_t bytes_to_keep);

    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return false; }
    int device_ordinal() const noexcept override { return ordinal_; }
    std::string description() const override;
    // The primary context this resource allocates in (held for its lifetime).
    const std::shared_ptr<detail::ContextBox>& context_box() const noexcept { return context_; }

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    std::uint64_t pool_attribute(CUmemPool_attribute attribute, const char* name) const;

    std::shared_ptr<detail::ContextBox> context_;
    CUmemoryPool pool_ = nullptr;
    int ordinal_ = 0;
};

}  // namespace cudacore
