/// @file
/// MemoryPool: the attributes of a stream-ordered memory pool (cuMemPoolGetAttribute /
/// cuMemPoolSetAttribute) and its trim (cuMemPoolTrimTo), for the pools behind
/// DeviceMemoryResource and PinnedMemoryPoolResource.
///
/// Ownership: a MemoryPool holds what owns its pool (the resource it came from), so the pool stays
/// valid while the MemoryPool exists. Copies are cheap and share the pool. Thread-safe (the
/// driver serialises attribute changes); setting an attribute affects every user of the pool.
/// Every call throws DriverError naming the attribute and the pool on failure.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cudacore {

/// One reading of every attribute (CU_MEMPOOL_ATTR_*).
struct MemoryPoolAttributes {
    bool reuse_follow_event_dependencies = false;
    bool reuse_allow_opportunistic = false;
    bool reuse_allow_internal_dependencies = false;
    std::uint64_t release_threshold = 0;
    std::uint64_t reserved_mem_current = 0;
    std::uint64_t reserved_mem_high = 0;
    std::uint64_t used_mem_current = 0;
    std::uint64_t used_mem_high = 0;
};

/// A memory pool's attributes and controls (release threshold, usage, trim).
class MemoryPool {
public:
    /// `owner` keeps the pool alive (null for a pool that outlives the program, like a device's
    /// default pool); `description` names it in errors.
    MemoryPool(CUmemoryPool pool, std::string description, std::shared_ptr<const void> owner);

    CUmemoryPool handle() const noexcept { return pool_; }
    const std::string& description() const noexcept { return description_; }

    MemoryPoolAttributes attributes() const;

    /// Reuse policies (writable).
    bool reuse_follow_event_dependencies() const;
    void set_reuse_follow_event_dependencies(bool enabled);
    bool reuse_allow_opportunistic() const;
    void set_reuse_allow_opportunistic(bool enabled);
    bool reuse_allow_internal_dependencies() const;
    void set_reuse_allow_internal_dependencies(bool enabled);

    /// Bytes of freed memory kept reserved across synchronisations (writable).
    std::uint64_t release_threshold() const;
    void set_release_threshold(std::uint64_t bytes);

    /// Reserved from the driver / in use by allocations: now, and the highest since the last
    /// reset. The high marks can only be reset (to the current value), not set.
    std::uint64_t reserved_mem_current() const;
    std::uint64_t reserved_mem_high() const;
    void reset_reserved_mem_high();
    std::uint64_t used_mem_current() const;
    std::uint64_t used_mem_high() const;
    void reset_used_mem_high();

    /// Gives reserved memory beyond `bytes_to_keep` back to the driver (cuMemPoolTrimTo).
    void trim_to(std::size_t bytes_to_keep);

private:
    std::uint64_t get_u64(CUmemPool_attribute attribute, const char* name) const;
    void set_u64(CUmemPool_attribute attribute, const char* name, std::uint64_t value);
    bool get_flag(CUmemPool_attribute attribute, const char* name) const;
    void set_flag(CUmemPool_attribute attribute, const char* name, bool value);

    CUmemoryPool pool_ = nullptr;
    std::string description_;
    std::shared_ptr<const void> owner_;
};

}  // namespace cudacore
