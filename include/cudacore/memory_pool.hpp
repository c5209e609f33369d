/// @file
/// MemoryPool: the attributes and trim of a stream-ordered memory pool (the pools behind
/// DeviceMemoryResource and PinnedMemoryPoolResource). Holds what owns its pool; copies share it;
/// close() ends it for every copy.
#pragma once

#include "cudacore/owning_handle.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cudacore {

/// One reading of every attribute (CU_MEMPOOL_ATTR_*).
struct MemoryPoolAttributes {
    /// Freed memory reused by a stream waiting on an event recorded after the free.
    bool reuse_follow_event_dependencies = false;
    /// Freed memory reused by any stream once the free is known complete.
    bool reuse_allow_opportunistic = false;
    /// The driver may insert dependencies to reuse freed memory.
    bool reuse_allow_internal_dependencies = false;
    /// Bytes of reserved memory kept across synchronisations.
    std::uint64_t release_threshold = 0;
    std::uint64_t reserved_mem_current = 0;  ///< bytes reserved from the driver now
    std::uint64_t reserved_mem_high = 0;     ///< most bytes reserved since the last reset
    std::uint64_t used_mem_current = 0;      ///< bytes in use by allocations now
    std::uint64_t used_mem_high = 0;         ///< most bytes in use since the last reset
};

/// Options of the deprecated MemoryPool::from_handle (DeviceMemoryResourceFromHandleOptions now).
struct MemoryPoolFromHandleOptions {
    /// Make the pool cudacore's; false: the caller keeps it alive and destroys it.
    bool take_ownership = false;
};

/// A memory pool's attributes and controls; a setting affects every user of the pool.
/// Thread-safe. DriverError names the attribute; InvalidArgumentError once closed.
class MemoryPool : public OwningHandle<MemoryPool, detail::MemoryPoolBox, CUmemoryPool> {
public:
    /// `owner` keeps the pool alive (null: it outlives the program); `description` names it.
    MemoryPool(CUmemoryPool pool, std::string description, std::shared_ptr<const void> owner);

    /// Forwards to DeviceMemoryResource::from_handle(...)->memory_pool().
    [[deprecated("use DeviceMemoryResource::from_handle(pool, device, options)->memory_pool()")]]
    static MemoryPool from_handle(CUmemoryPool pool, const Device& device,
                                  const MemoryPoolFromHandleOptions& options = {});
    /// False: the resource a MemoryPool holds destroys the pool, never the MemoryPool.
    bool owns_handle() const noexcept;

    /// The pool's name in error messages (what it was, once closed).
    const std::string& description() const noexcept;

    /// Every attribute, one query each (not one atomic snapshot).
    MemoryPoolAttributes attributes() const;

    /// CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES (see MemoryPoolAttributes).
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

    /// Bytes of freed memory kept reserved across synchronisations.
    std::uint64_t release_threshold() const;
    /// Sets CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, in bytes (UINT64_MAX: never release).
    void set_release_threshold(std::uint64_t bytes);

    /// Bytes reserved from the driver now.
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

    /// Gives reserved memory beyond `bytes_to_keep` back to the driver.
    void trim_to(std::size_t bytes_to_keep);

    /// Ends the pool object for every copy, letting go of its owner. DriverError (closed anyway).
    void close();

private:
    std::uint64_t get_u64(CUmemPool_attribute attribute, const char* name) const;
    void set_u64(CUmemPool_attribute attribute, const char* name, std::uint64_t value);
    bool get_flag(CUmemPool_attribute attribute, const char* name) const;
    void set_flag(CUmemPool_attribute attribute, const char* name, bool value);
};

}  // namespace cudacore
