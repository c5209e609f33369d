/// @file
/// CachingMemoryResource: a caching sub-allocator over another memory resource (by default a
/// device's memory pool) that keeps freed blocks for reuse, per thread, for blocks of similar
/// sizes allocated and freed at a high rate. When to choose it, how it works and what it costs:
/// docs/design/memory-resources.md.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/owning_handle.hpp"
#include "cudacore/memory_resource.hpp"

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cudacore {

class Device;

/// Options of a CachingMemoryResource.
struct CachingMemoryResourceOptions {
    /// Largest request served from the cache; larger ones go to the upstream resource uncached.
    std::size_t max_block_size = std::size_t{64} << 20;
    /// Most bytes of free blocks one thread's arena keeps (for its own streams).
    std::size_t max_thread_cached_bytes = std::size_t{64} << 20;
    /// Most bytes of free blocks the shared arena keeps; the whole cache is bounded by
    /// max_cached_bytes + (threads using it) * max_thread_cached_bytes.
    std::size_t max_cached_bytes = std::size_t{1} << 30;
};

/// What the resource holds and did, summed over every arena at the time of the call.
struct CachingMemoryStatistics {
    std::uint64_t bytes_in_use = 0;     ///< handed out and not freed (size classes, not requests)
    std::uint64_t bytes_cached = 0;     ///< free blocks kept for reuse
    std::uint64_t bytes_reserved = 0;   ///< held from the upstream resource (in use + cached)
    std::uint64_t peak_bytes_reserved = 0;  ///< most bytes held from the upstream resource at once
    std::uint64_t hits = 0;             ///< allocations served from the cache
    std::uint64_t misses = 0;           ///< allocations that went to the upstream resource
    std::uint64_t oversized = 0;        ///< of the misses, requests beyond max_block_size
    std::uint64_t upstream_frees = 0;   ///< blocks given back to the upstream resource
    std::uint64_t releases = 0;         ///< release() calls, including those on out-of-memory
};

/// A memory resource that keeps freed blocks per thread for reuse, in stream order. Create it with
/// std::make_shared (or create()); it holds its upstream and its buffers hold it. Thread-safe.
class CachingMemoryResource final : public MemoryResource {
public:
    /// Caches blocks of `upstream`; InvalidArgumentError for null or a bad max_block_size.
    explicit CachingMemoryResource(std::shared_ptr<MemoryResource> upstream,
                                   const CachingMemoryResourceOptions& options = {});
    /// Over the default memory pool of `device`; throws as DeviceMemoryResource's constructor.
    static std::shared_ptr<CachingMemoryResource> create(
        const Device& device, const CachingMemoryResourceOptions& options = {});
    ~CachingMemoryResource() override;  ///< gives every cached block back; errors are ignored

    /// Waits for the device's queued work, then gives every cached block back to the upstream;
    /// also on upstream out-of-memory. DriverError when that fails (blocks not freed stay cached).
    void release();

    CachingMemoryStatistics statistics() const;  ///< sums every arena's counters

    /// The options it was made with.
    const CachingMemoryResourceOptions& options() const noexcept { return options_; }
    /// The resource blocks come from.
    const std::shared_ptr<MemoryResource>& upstream() const noexcept { return upstream_; }
    /// The bytes a request of `size` takes (its size class).
    std::size_t block_size(std::size_t size) const noexcept;

    bool is_device_accessible() const noexcept override;
    bool is_host_accessible() const noexcept override;
    bool is_managed() const noexcept override;
    int device_ordinal() const noexcept override;
    std::string description() const override;  ///< "caching resource over memory pool of device 0"

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    void do_close() override;  ///< release(), so every cached block goes back upstream

private:
    std::shared_ptr<MemoryResource> upstream_;
    CachingMemoryResourceOptions options_;
    std::shared_ptr<detail::CachingCore> core_;
};

}  // namespace cudacore
