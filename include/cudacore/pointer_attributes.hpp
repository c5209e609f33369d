/// @file
/// What the driver knows about an address (one cuPointerGetAttributes). An address it does not
/// know is MemoryType::unregistered, not an exception. The answer holds nothing.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>

namespace cudacore {

/// The kind of memory at an address, as the CUDA runtime's cudaMemoryType names it.
enum class MemoryType {
    unregistered,  ///< unknown to the driver: pageable host memory, freed or never allocated
    host,          ///< pinned host memory (cuMemHostAlloc, cuMemHostRegister, pinned pools)
    device,        ///< device memory (cuMemAlloc, pools, virtual memory, IPC mappings)
    managed,       ///< managed (unified) memory, cuMemAllocManaged; the driver says "device"
};

/// "unregistered", "host", "device" or "managed".
const char* to_string(MemoryType type) noexcept;

/// The driver's answers for one address (CU_POINTER_ATTRIBUTE_*); empty where none applies.
struct PointerAttributes {
    MemoryType memory_type = MemoryType::unregistered;  ///< MEMORY_TYPE and IS_MANAGED together
    CUcontext context = nullptr;     ///< CONTEXT: null for pool and virtual memory (no context)
    int device_ordinal = -1;         ///< DEVICE_ORDINAL: -1 when unregistered
    /// DEVICE_POINTER: the address kernels use; 0 when the driver gives none.
    CUdeviceptr device_pointer = 0;
    void* host_pointer = nullptr;    ///< HOST_POINTER: the address for the host (null if none)
    CUdeviceptr range_start = 0;     ///< RANGE_START_ADDR: the allocation containing the address
    std::size_t range_size = 0;      ///< RANGE_SIZE: that allocation's size in bytes
    CUmemoryPool pool = nullptr;     ///< MEMPOOL_HANDLE: the pool it came from (null if none)
    unsigned long long buffer_id = 0;  ///< BUFFER_ID: unique per allocation in the process
    bool is_managed = false;         ///< IS_MANAGED: managed memory
    bool is_mapped = false;          ///< MAPPED: backed by physical memory (virtual memory)
    bool is_legacy_ipc_capable = false;  ///< IS_LEGACY_CUDA_IPC_CAPABLE: export_memory works

    /// The driver knows the address (memory_type is not unregistered).
    bool is_known() const noexcept { return memory_type != MemoryType::unregistered; }
    /// The offset of `pointer` in the containing range; 0 when unknown.
    std::size_t offset_of(CUdeviceptr pointer) const noexcept {
        return range_start && pointer >= range_start ? pointer - range_start : 0;
    }
    /// "device memory of device 0, range 0x7f...+4096, pool 0x..., context 0x...".
    std::string description() const;
};

/// The attributes of `pointer`. NoDriverError, DriverError. Thread-safe; allocates nothing.
PointerAttributes pointer_attributes(CUdeviceptr pointer);
/// pointer_attributes for a host-side pointer (pinned, managed, registered or plain host memory).
PointerAttributes pointer_attributes(const void* pointer);

}  // namespace cudacore
