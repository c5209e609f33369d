/// @file
/// DeviceMemoryResource: stream-ordered device memory from a device's memory pool (its default
/// pool, shared with cuMemAllocAsync, or one of its own, which ipc_enabled makes importable by
/// other processes: ipc.hpp). More: docs/design/memory-resources.md.
#pragma once

#include "cudacore/owning_handle.hpp"
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
    /// Bytes of freed memory the pool keeps reserved across synchronisations; empty: unchanged.
    std::optional<std::uint64_t> release_threshold{};
    /// A pool of its own that other processes can import (CUDA_ERROR_NOT_SUPPORTED where none can).
    bool ipc_enabled = false;
    /// For a pool of its own: the most bytes it may hold (0: the driver's default).
    std::size_t max_size = 0;
};

/// A pool that cudacore creates for one resource (cuMemPoolCreate), not shared with cuMemAllocAsync.
struct DeviceMemoryPoolOptions {
    std::size_t max_size = 0;  ///< most bytes the pool may reserve (0: the driver's default)
    /// Bytes of freed memory the pool keeps reserved across synchronisations (empty: 0).
    std::optional<std::uint64_t> release_threshold{};
    /// Handle types (CUmemAllocationHandleType bits) the pool may be shared as.
    unsigned handle_types = CU_MEM_HANDLE_TYPE_NONE;
};

/// Options of DeviceMemoryResource::from_handle.
struct DeviceMemoryResourceFromHandleOptions {
    /// Destroy the pool with the resource, after its last buffer's free; false: the caller does.
    bool take_ownership = false;
};

/// The earlier name of MemoryAccess.
using PoolAccess [[deprecated("use MemoryAccess (memory_access.hpp), the same enumerators")]] = MemoryAccess;

/// Stream-ordered device memory from a memory pool; holds the device's primary context. Memory is
/// usable on the allocating stream; other streams wait for it first. Create it with
/// std::make_shared. Thread-safe, except that changes of one pool's access must not race. Members
/// throw DriverError when the driver refuses.
class DeviceMemoryResource final : public BuiltinMemoryResource<true, false> {
public:
    struct OwnedPoolTag {};
    /// The default pool of `device` (CUDA_ERROR_NOT_SUPPORTED for a device without pools).
    explicit DeviceMemoryResource(const Device& device,
                                  const DeviceMemoryResourceOptions& options = {});
    /// Adopts a pool imported from another process (ipc.hpp's import_memory_pool).
    DeviceMemoryResource(const Device& device, const detail::ImportedPool& imported);

    /// Whether the pool is shareable (ipc_enabled, or imported).
    bool is_ipc_enabled() const noexcept { return ipc_pool_ || imported_; }
    /// Whether the pool was imported (such a resource cannot allocate).
    bool is_imported() const noexcept { return imported_; }
    /// The pool's IPC identity (all zero for a pool that is not shared).
    const std::array<unsigned char, 16>& ipc_pool_id() const noexcept { return ipc_id_; }

    /// Devices other than the pool's own with read-write access to its memory.
    std::vector<Device> peer_accessible_by() const;
    /// Grants read-write access to the devices listed and removes it from those left out.
    /// InvalidArgumentError when the pool's own device is listed.
    void set_peer_accessible_by(const std::vector<Device>& devices);
    /// How `device` may reach the pool's memory (read_write for the pool's own device).
    MemoryAccess access_of(const Device& device) const;
    /// Sets the access of each device listed to `access`; throws as set_peer_accessible_by.
    void set_access(const std::vector<Device>& devices, MemoryAccess access);
    /// A new pool of `device` owned by this resource (prefer create_owned_pool()).
    /// InvalidArgumentError for a device without pools or an unsupported handle type.
    DeviceMemoryResource(OwnedPoolTag, const Device& device, const DeviceMemoryPoolOptions& options);
    /// A resource that allocates from `pool`, made elsewhere, whose memory lives on `device`
    /// (checked to have read-write access). InvalidArgumentError for a null pool, a device without
    /// access, or taking over a default pool.
    static std::shared_ptr<DeviceMemoryResource> from_handle(
        CUmemoryPool pool, const Device& device,
        const DeviceMemoryResourceFromHandleOptions& options = {});
    /// What from_handle makes (make_shared needs a public constructor).
    struct ForeignPoolTag {};
    /// See from_handle.
    DeviceMemoryResource(ForeignPoolTag, CUmemoryPool pool, const Device& device, bool take_ownership);
    /// std::make_shared of the owned-pool constructor.
    static std::shared_ptr<DeviceMemoryResource> create_owned_pool(
        const Device& device, const DeviceMemoryPoolOptions& options = {});
    ~DeviceMemoryResource() override;

    /// True for a pool made by create_owned_pool, false for the device's default pool.
    bool owns_pool() const noexcept { return owns_pool_; }
    /// The pool's max_size (0: the driver's default).
    std::size_t max_size() const noexcept { return max_size_; }
    /// Every attribute of the pool; holds this resource when it was made with std::make_shared.
    MemoryPool memory_pool() const;

    /// The driver's pool; valid while this resource lives.
    CUmemoryPool pool() const noexcept { return pool_; }

    /// Sets the pool's release threshold, in bytes (for the default pool, for every user).
    void set_release_threshold(std::uint64_t bytes);
    std::uint64_t release_threshold() const;  ///< the pool's release threshold in bytes
    std::uint64_t used_memory() const;  ///< bytes in use by allocations in the whole pool
    std::uint64_t reserved_memory() const;  ///< bytes reserved from the driver
    /// Gives reserved memory beyond `bytes_to_keep` back to the driver (cuMemPoolTrimTo).
    void trim_to(std::size_t bytes_to_keep);

    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    /// An owned pool gives its unused reserve back; the default pool is left as it is.
    void do_close() override;

private:
    friend struct detail::BoxAccess;
    std::uint64_t pool_attribute(CUmemPool_attribute attribute, const char* name) const;
    void apply_access(std::vector<CUmemAccessDesc>& changes, const char* call);

    std::shared_ptr<detail::ContextBox> context_;
    CUmemoryPool pool_ = nullptr;
    bool owns_pool_ = false;  ///< made by cuMemPoolCreate, destroyed with the resource
    bool ipc_pool_ = false;   ///< made shareable (ipc_enabled)
    bool imported_ = false;   ///< imported from another process (destroyed with the resource)
    bool foreign_ = false;    ///< from_handle: a pool made elsewhere
    std::array<unsigned char, 16> ipc_id_{};
    std::size_t max_size_ = 0;
};

}  // namespace cudacore
