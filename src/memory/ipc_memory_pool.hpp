// Shareable memory pools (DeviceMemoryResource and PinnedMemoryPoolResource with ipc_enabled):
// created shareable through POSIX file descriptors, destroyed with the resource.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>

namespace cudacore {
class Device;
}

namespace cudacore::detail {

// A pool imported from another process and its identity (made by import_memory_pool, adopted by
// the DeviceMemoryResource and PinnedMemoryPoolResource constructors that take one).
struct ImportedPool {
    CUmemoryPool pool = nullptr;
    std::array<unsigned char, 16> id{};
};

// A pool on `device` whose allocations other processes can import; `id` receives a fresh random
// identity for it. Throws DriverError (CUDA_ERROR_NOT_SUPPORTED with the reason when the device
// cannot share pools).
CUmemoryPool create_ipc_pool(const Device& device, std::size_t max_size,
                             std::array<unsigned char, 16>& id);

// Fills `id` with a fresh random identity for a shareable pool.
void random_pool_id(std::array<unsigned char, 16>& id);

// cuMemPoolDestroy, errors ignored (used from destructors, maybe at exit).
void destroy_pool(CUmemoryPool pool) noexcept;

}  // namespace cudacore::detail
