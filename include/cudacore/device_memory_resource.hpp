/// @file
/// DeviceMemoryResource: stream-ordered device memory from a device's memory pool
/// (cuMemAllocFromPoolAsync / cuMemFreeAsync). Memory is usable by work on the allocating stream
/// after allocate(); other streams wait for that stream first. The device's default pool is
/// shared by every DeviceMemoryResource of the device and cuMemAllocAsync; with ipc_enabled the
/// resource owns a pool of its own that other processes can import (cudacore/ipc.hpp). It holds
/// the device's primary context. Create it with std::make_shared. Thread-safe. More:
/// docs/design/memory-resources.md.
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/memory_access.hpp"
#include "cudacore/memory_pool.hpp"
#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/memory_resource.hpp"

#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace cudacore {

class Device;

/// Options of a DeviceMemoryResource (IPC, an owned pool's limits).
struct DeviceMemoryResourceOptions {
    /// Bytes of freed memory the pool keeps reserved across synchronisations (applied to the
    /// device's default pool). Empty: leave the pool's current setting.
    std::optional<std::uint64_t> release_threshold{};
    /// A pool of its own that other processes can import (POSIX file descriptor handles). Throws
    /// DriverError with CUDA_ERROR_NOT_SUPPORTED on a device or system that cannot share pools.
    bool ipc_enabled = false;
    /// For a pool of its own: the most bytes it may hold (0: the driver's default).
    std::size_t max_size = 0;
};

/// A pool that cudacore creates for one resource (cuMemPoolCreate), not shared with cuMemAllocAsync.
struct DeviceMemoryPoolOptions {
    /// Most bytes the pool may reserve; allocations beyond it fail with CUDA_ERROR_OUT_OF_MEMORY
    /// naming this limit. 0: the driver's default (no cudacore limit).
    std::size_t max_size = 0;
    /// Bytes of freed memory the pool keeps reserved across synchronisations. Empty: the driver's
    /// default (0).
    std::optional<std::uint64_t> release_threshold{};
    /// Handle types the pool may be shared as (CUmemAllocationHandleType bits), for inter-process
    /// pools; each must be in CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES.
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
};

/// Options of DeviceMemoryResource::from_handle.
struct DeviceMemoryResourceFromHandleOptions {
    /// Destroy the pool (cuMemPoolDestroy) with the resource, after its last buffer's free; false:
    /// the pool stays the caller's, who keeps it alive while the resource and its buffers live.
    bool take_ownership = false;
};

/// The earlier name of MemoryAccess (memory_access.hpp), which has the same enumerators: pools and
/// mapped virtual memory take one type of access.
using PoolAccess [[deprecated("use MemoryAccess (memory_access.hpp), the same enumerators")]] = MemoryAccess;

/// Stream-ordered device memory from a memory pool (the device's default pool, or one of its own).
class DeviceMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    struct OwnedPoolTag {};
    /// The default pool of `device`. Throws NoDriverError / DriverError (a device without memory
    /// pools gives CUDA_ERROR_NOT_SUPPORTED).
    explicit DeviceMemoryResource(const Device& device,
                                  const DeviceMemoryResourceOptions& options = {});
    /// Adopts a pool imported from another process (import_memory_pool in ipc.hpp makes it).
    DeviceMemoryResource(const Device& device, const detail::ImportedPool& imported);

    /// IPC: whether the pool is shareable (ipc_enabled, or imported), whether it was imported, and
    /// the pool's identity (random, made by the exporter; all zero for a default pool).
    bool is_ipc_enabled() const noexcept { return ipc_pool_ || imported_; }
    /// Whether the pool was imported from another process (such a resource cannot allocate).
    bool is_imported() const noexcept { return imported_; }
    /// The pool's IPC identity (all zero for a pool that is not shared).
    const std::array<unsigned char, 16>& ipc_pool_id() const noexcept { return ipc_id_; }

    /// Devices other than the pool's own with read-write access to its memory
    /// (cuMemPoolGetAccess; read-only ones are not listed: see access_of). For the default pool
    /// access is shared with every user of that pool.
    std::vector<Device> peer_accessible_by() const;
    /// Grants read-write access to the devices listed and removes it from those left out (a
    /// device listed twice counts once; read-only devices left out lose their access too).
    /// Throws InvalidArgumentError when the pool's own device is listed (it always has read-write
    /// access, and the driver refuses it in an access list), DriverError with
    /// CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, naming the devices, when the hardware cannot give a
    /// device access.
    void set_peer_accessible_by(const std::vector<Device>& devices);
    /// How `device` may reach the pool's memory (cuMemPoolGetAccess); read_write for the pool's
    /// own device. DriverError when the query fails.
    MemoryAccess access_of(const Device& device) const;
    /// Sets the access of each device listed to `access` (read-only: CU_MEM_ACCESS_FLAGS_PROT_READ),
    /// leaving the others as they are; one cuMemPoolSetAccess. Throws as set_peer_accessible_by
    /// (the pool's own device listed is an InvalidArgumentError). Not thread-safe against other
    /// changes of the same pool's access.
    void set_access(const std::vector<Device>& devices, MemoryAccess access);
    /// A new pool of `device` owned by this resource (destroyed with it; its buffers hold it).
    /// Throws InvalidArgumentError for a device without memory pools
    /// (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED 0) or a handle type the device does not
    /// support, DriverError when the driver refuses the pool. Prefer create_owned_pool().
    DeviceMemoryResource(OwnedPoolTag, const Device& device, const DeviceMemoryPoolOptions& options);
    /// A resource that allocates from `pool`, a pool made elsewhere (cuMemPoolCreate by another
    /// library, cuDeviceGetDefaultMemPool) whose memory lives on `device`: the one way to wrap a
    /// pool's handle (MemoryPool::from_handle, the other, is deprecated and forwards here). The
    /// driver has no query for a pool's own device, so the caller names it and cudacore checks
    /// that `device` has read-write access to the pool (cuMemPoolGetAccess; a pool's own device
    /// always has). Release threshold, access list and memory_pool() (the pool's attributes,
    /// holding this resource) work as for any pool. With `options.take_ownership` the pool is
    /// destroyed with the resource, after its last buffer's free. Throws InvalidArgumentError
    /// naming the call for a null pool, for a device without read-write access to the pool (not
    /// its device) and for taking over a device's default pool (nobody destroys it); DriverError
    /// when the access query fails. Thread-safe, as any resource.
    static std::shared_ptr<DeviceMemoryResource> from_handle(
        CUmemoryPool pool, const Device& device,
        const DeviceMemoryResourceFromHandleOptions& options = {});
    /// What from_handle makes (std::make_shared needs a public constructor; use from_handle).
    struct ForeignPoolTag {};
    /// See from_handle.
    DeviceMemoryResource(ForeignPoolTag, CUmemoryPool pool, const Device& device, bool take_ownership);
    /// std::make_shared of the owned-pool constructor above; throws what it throws.
    static std::shared_ptr<DeviceMemoryResource> create_owned_pool(
        const Device& device, const DeviceMemoryPoolOptions& options = {});
    ~DeviceMemoryResource() override;

    /// True for a pool made by create_owned_pool, false for the device's default pool.
    bool owns_pool() const noexcept { return owns_pool_; }
    /// The pool's max_size (0: the driver's default).
    std::size_t max_size() const noexcept { return max_size_; }
    /// Every attribute of the pool, readable and settable; holds this resource when it was made
    /// with std::make_shared (else the caller keeps the resource alive while it is used).
    MemoryPool memory_pool() const;

    /// The driver's pool; valid while this resource lives.
    CUmemoryPool pool() const noexcept { return pool_; }

    /// Sets the pool's CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, in bytes (for the default pool, for
    /// every user of it). DriverError when the driver refuses.
    void set_release_threshold(std::uint64_t bytes);
    /// The pool's release threshold in bytes. DriverError when the query fails.
    std::uint64_t release_threshold() const;
    /// Bytes in use by allocations (CU_MEMPOOL_ATTR_USED_MEM_CURRENT) and reserved from the driver
    /// (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), for the whole pool.
    std::uint64_t used_memory() const;
    /// Bytes reserved from the driver (see used_memory). DriverError when the query fails.
    std::uint64_t reserved_memory() const;
    /// Gives reserved memory beyond `bytes_to_keep` back to the driver (cuMemPoolTrimTo).
    void trim_to(std::size_t bytes_to_keep);

    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    /// close(): an owned pool gives its unused reserve back (cuMemPoolTrimTo 0); the pool is
    /// destroyed with the resource, after its last buffer. The default pool is left as it is.
    void do_close() override;

private:
    friend struct detail::BoxAccess;
    std::uint64_t pool_attribute(CUmemPool_attribute attribute, const char* name) const;
    void apply_access(std::vector<CUmemAccessDesc>& changes, const char* call);

    std::shared_ptr<detail::ContextBox> context_;
    CUmemoryPool pool_ = nullptr;
    bool owns_pool_ = false;  ///< made by cuMemPoolCreate (ipc_enabled or create_owned_pool), destroyed with the resource
    bool ipc_pool_ = false;   ///< made shareable (ipc_enabled)
    bool imported_ = false;   ///< imported from another process (also destroyed with the resource)
    bool foreign_ = false;    ///< from_handle: a pool made elsewhere
    std::array<unsigned char, 16> ipc_id_{};
    std::size_t max_size_ = 0;
};

}  // namespace cudacore
