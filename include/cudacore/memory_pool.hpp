/// @file
/// MemoryPool: the attributes and trim of a stream-ordered memory pool, for the pools behind
/// DeviceMemoryResource and PinnedMemoryPoolResource. Holds what owns its pool; copies share it;
/// close() ends it for every copy. A pool made elsewhere is wrapped by
/// DeviceMemoryResource::from_handle. Thread-safe; an attribute set affects every user of the
/// pool. Every call throws DriverError naming the attribute and the pool on failure.
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cudacore {

/// One reading of every attribute (CU_MEMPOOL_ATTR_*).
struct MemoryPoolAttributes {
    /// Freed memory may be reused by a stream that waits on an event recorded after the free
    /// (CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES).
    bool reuse_follow_event_dependencies = false;
    /// Freed memory may be reused by any stream once the free is known complete
    /// (CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC).
    bool reuse_allow_opportunistic = false;
    /// The driver may insert dependencies to reuse freed memory
    /// (CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES).
    bool reuse_allow_internal_dependencies = false;
    /// Bytes of reserved memory kept across synchronisations (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD).
    std::uint64_t release_threshold = 0;
    /// Bytes reserved from the driver now (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).
    std::uint64_t reserved_mem_current = 0;
    /// Most bytes reserved since the last reset (CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH).
    std::uint64_t reserved_mem_high = 0;
    /// Bytes in use by allocations now (CU_MEMPOOL_ATTR_USED_MEM_CURRENT).
    std::uint64_t used_mem_current = 0;
    /// Most bytes in use since the last reset (CU_MEMPOOL_ATTR_USED_MEM_HIGH).
    std::uint64_t used_mem_high = 0;
};

/// Options of the deprecated MemoryPool::from_handle (DeviceMemoryResourceFromHandleOptions now).
struct MemoryPoolFromHandleOptions {
    /// Make the pool cudacore's, destroyed when the last copy goes or at close(). False: the
    /// caller keeps it alive while it is used, and cudacore never destroys it.
    bool take_ownership = false;
};

/// A memory pool's attributes and controls (release threshold, usage, trim).
class MemoryPool : public OwningHandle<MemoryPool, detail::MemoryPoolBox, CUmemoryPool> {
public:
    /// `owner` keeps the pool alive (null for a pool that outlives the program, like a device's
    /// default pool); `description` names it in errors.
    MemoryPool(CUmemoryPool pool, std::string description, std::shared_ptr<const void> owner);

    /// Forwards to DeviceMemoryResource::from_handle(pool, device, {.take_ownership = ...})
    /// ->memory_pool(), with its checks and errors.
    [[deprecated("use DeviceMemoryResource::from_handle(pool, device, options)->memory_pool()")]]
    static MemoryPool from_handle(CUmemoryPool pool, const Device& device,
                                  const MemoryPoolFromHandleOptions& options = {});
    /// False: a MemoryPool never destroys its pool; the resource it holds does (an owned pool, or
    /// one DeviceMemoryResource::from_handle took over: DeviceMemoryResource::owns_pool()).
    bool owns_handle() const noexcept;

    /// The pool's name in error messages (what it was, once closed).
    const std::string& description() const noexcept;

    /// Every attribute, one cuMemPoolGetAttribute each (not one atomic snapshot: usage may move
    /// between the readings).
    MemoryPoolAttributes attributes() const;

    /// Reuse policies (writable).
    bool reuse_follow_event_dependencies() const;
    /// Sets CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES.
    void set_reuse_follow_event_dependencies(bool enabled);
    /// CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC (see MemoryPoolAttributes).
    bool reuse_allow_opportunistic() const;
    /// Sets CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC.
    void set_reuse_allow_opportunistic(bool enabled);
    /// CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES (see MemoryPoolAttributes).
    bool reuse_allow_internal_dependencies() const;
    /// Sets CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES.
    void set_reuse_allow_internal_dependencies(bool enabled);

    /// Bytes of freed memory kept reserved across synchronisations (writable).
    std::uint64_t release_threshold() const;
    /// Sets CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, in bytes (UINT64_MAX: never release).
    void set_release_threshold(std::uint64_t bytes);

    /// Reserved from the driver / in use by allocations: now, and the highest since the last
    /// reset. The high marks can only be reset (to the current value), not set.
    std::uint64_t reserved_mem_current() const;
    /// Most bytes reserved since the last reset_reserved_mem_high().
    std::uint64_t reserved_mem_high() const;
    /// Resets the reserved high mark to the current reservation.
    void reset_reserved_mem_high();
    /// Bytes in use by allocations now.
    std::uint64_t used_mem_current() const;
    /// Most bytes in use since the last reset_used_mem_high().
    std::uint64_t used_mem_high() const;
    /// Resets the used high mark to the current use.
    void reset_used_mem_high();

    /// Gives reserved memory beyond `bytes_to_keep` back to the driver (cuMemPoolTrimTo).
    void trim_to(std::size_t bytes_to_keep);

    /// Ends the pool object for every copy, letting go of the pool's owner (the resource it came
    /// from, which goes when nothing else holds it): docs/errors-and-lifetime.md, "Closing and
    /// resetting". DriverError when the release it makes fails (closed all the same).
    void close();

private:
    std::uint64_t get_u64(CUmemPool_attribute attribute, const char* name) const;
    void set_u64(CUmemPool_attribute attribute, const char* name, std::uint64_t value);
    bool get_flag(CUmemPool_attribute attribute, const char* name) const;
    void set_flag(CUmemPool_attribute attribute, const char* name, bool value);
};

}  // namespace cudacore
