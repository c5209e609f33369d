// PinnedMemoryPoolResource: page-locked host memory from a host memory pool (cuMemPoolCreate with
// a CU_MEM_LOCATION_TYPE_HOST or CU_MEM_LOCATION_TYPE_HOST_NUMA location), allocated and freed
// in stream order (cuMemAllocFromPoolAsync / cuMemFreeAsync) like device pool memory. Beside the
// classic PinnedMemoryResource (cuMemHostAlloc): allocation is cheap once the pool holds memory,
// and the memory can be placed on one host NUMA node.
//
// The memory is host accessible (read it after the allocating stream reached the allocation, e.g.
// stream.sync()) and device accessible from the devices the options list (cuMemPoolSetAccess).
//
// Ownership: create it with std::make_shared; the pool is destroyed with the resource, which every
// Buffer holds; it holds the primary context of its device. Thread-safe.
#pragma once

#include "cudacore/memory_pool.hpp"
#include "cudacore/memory_resource.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace cudacore {

namespace detail {
struct ContextBox;
}

class Device;

struct PinnedMemoryPoolOptions {
    // Host NUMA node to place the memory on (CU_MEM_LOCATION_TYPE_HOST_NUMA); empty: any node
    // (CU_MEM_LOCATION_TYPE_HOST).
    std::optional<int> host_numa_id;
    // Most bytes the pool may reserve (0: the driver's default).
    std::size_t max_size = 0;
    // Bytes of freed memory kept reserved across synchronisations (empty: the driver's default).
    std::optional<std::uint64_t> release_threshold;
    // Devices (ordinals) given read-write access besides the resource's own device.
    std::vector<int> accessible_devices;
};

class PinnedMemoryPoolResource final : public MemoryResource {
public:
    // Throws InvalidArgumentError for a negative NUMA id, an unknown device, or a device without
    // host (NUMA) memory pools (CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED /
    // CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED is 0, named in the message),
    // DriverError when cuMemPoolCreate fails, NoDriverError.
    explicit PinnedMemoryPoolResource(const Device& device,
                                      const PinnedMemoryPoolOptions& options = {});
    ~PinnedMemoryPoolResource() override;

    CUmemoryPool pool() const noexcept { return pool_; }
    MemoryPool memory_pool() const;
    const PinnedMemoryPoolOptions& options() const noexcept { return options_; }

    bool is_device_accessible() const noexcept override { return true; }
    bool is_host_accessible() const noexcept override { return true; }
    int device_ordinal() const noexcept override { return ordinal_; }
    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;

private:
    std::shared_ptr<detail::ContextBox> context_;
    CUmemoryPool pool_ = nullptr;
    int ordinal_ = 0;
    PinnedMemoryPoolOptions options_;
};

}  // namespace cudacore
