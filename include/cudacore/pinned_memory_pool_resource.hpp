/// @file
/// PinnedMemoryPoolResource: page-locked host memory from a host memory pool, stream-ordered.
/// More: docs/design/memory-resources.md.
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/memory_pool.hpp"
#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/memory_resource.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace cudacore {

class Device;

/// Options of a PinnedMemoryPoolResource: NUMA node, IPC, limits.
struct PinnedMemoryPoolOptions {
    /// Host NUMA node to place the memory on; empty: any node.
    std::optional<int> host_numa_id{};
    /// Most bytes the pool may reserve (0: the driver's default).
    std::size_t max_size = 0;
    /// Bytes of freed memory kept reserved across synchronisations (empty: the driver's default).
    std::optional<std::uint64_t> release_threshold{};
    /// Devices (ordinals) given read-write access besides the resource's own device.
    std::vector<int> accessible_devices{};
    /// Shareable with other processes (cudacore/ipc.hpp) through a POSIX file descriptor.
    bool ipc_enabled = false;
};

/// Pinned host memory from a host pool, stream-ordered, device accessible from the listed
/// devices. Holds its device's primary context and its pool. Thread-safe.
class PinnedMemoryPoolResource final : public BuiltinMemoryResource<true, true> {
public:
    /// InvalidArgumentError (NUMA id, device, no host pools), DriverError, NoDriverError.
    explicit PinnedMemoryPoolResource(const Device& device,
                                      const PinnedMemoryPoolOptions& options = {});
    /// Adopts a pool imported from another process (import_pinned_memory_pool) for `device`.
    PinnedMemoryPoolResource(const Device& device, const detail::ImportedPool& imported);
    ~PinnedMemoryPoolResource() override;

    /// The driver's pool; valid while this resource lives.
    CUmemoryPool pool() const noexcept { return pool_; }
    /// Every attribute of the pool; holds this resource when made with std::make_shared.
    MemoryPool memory_pool() const;
    /// The options it was made with (default options for an imported pool).
    const PinnedMemoryPoolOptions& options() const noexcept { return options_; }
    /// Whether the pool is shareable (ipc_enabled, or imported).
    bool is_ipc_enabled() const noexcept { return options_.ipc_enabled || imported_; }
    /// Whether the pool was imported from another process (such a resource cannot allocate).
    bool is_imported() const noexcept { return imported_; }
    /// The pool's IPC identity (all zero when not shareable).
    const std::array<unsigned char, 16>& ipc_pool_id() const noexcept { return ipc_id_; }
    /// The host NUMA node the pool is placed on, when it is placed on one.
    std::optional<int> host_numa_id() const noexcept { return numa_id_; }

    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    /// close(): the pool gives its unused reserve back (not an imported one).
    void do_close() override;

private:
    friend struct detail::BoxAccess;
    std::shared_ptr<detail::ContextBox> context_;
    CUmemoryPool pool_ = nullptr;
    PinnedMemoryPoolOptions options_;
    std::optional<int> numa_id_;
    bool imported_ = false;
    std::array<unsigned char, 16> ipc_id_{};
};

}  // namespace cudacore
