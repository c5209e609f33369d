/// @file
/// CachingMemoryResource: a caching sub-allocator over another memory resource (by default a
/// device's memory pool) that keeps freed blocks for reuse, per thread, so that many threads
/// allocating at once do not meet in the driver. Choose it for blocks of similar sizes allocated
/// and freed at a high rate; keep the driver pool when memory must go back at once, sizes never
/// repeat, or for IPC and graphs. Blocks are reused in stream order, as the driver's pool does.
/// Create it with std::make_shared (or create()); it holds its upstream resource and its buffers
/// hold it. Thread-safe. How it works and what it costs: docs/design/memory-resources.md.
#pragma once

#include "cudacore/buffer.hpp"  // allocate() returns one
#include "cudacore/forward.hpp"
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
    /// Most bytes of free blocks the shared arena keeps (reusable by any thread and stream).
    /// The whole cache is bounded by max_cached_bytes + (threads using the resource) *
    /// max_thread_cached_bytes.
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

/// A memory resource that keeps freed blocks per thread for reuse (this file's description says
/// when to choose it).
class CachingMemoryResource final : public MemoryResource {
public:
    /// Caches blocks of `upstream` (not null; every block it hands out is one upstream
    /// allocation). Throws InvalidArgumentError for a null upstream, a max_block_size of 0 or
    /// above 2^40 bytes.
    explicit CachingMemoryResource(std::shared_ptr<MemoryResource> upstream,
                                   const CachingMemoryResourceOptions& options = {});
    /// Over the default memory pool of `device` (a DeviceMemoryResource of its own, so that the
    /// pool's release threshold is left as it is). Throws as DeviceMemoryResource's constructor.
    static std::shared_ptr<CachingMemoryResource> create(
        const Device& device, const CachingMemoryResourceOptions& options = {});
    /// Gives every cached block back (see release()); errors are ignored.
    ~CachingMemoryResource() override;

    /// Gives every cached block of every arena back to the upstream resource: first waits for the
    /// device to finish the work queued before (cuCtxSynchronize), since the blocks' last users
    /// may still run on streams that no longer exist, then frees them. Blocks in use are not
    /// touched. Called on upstream out-of-memory too. Throws DriverError when waiting or freeing
    /// fails (blocks not freed yet stay cached).
    void release();

    /// Sums every arena's counters (locks each arena briefly). Thread-safe.
    CachingMemoryStatistics statistics() const;

    /// The options it was made with.
    const CachingMemoryResourceOptions& options() const noexcept { return options_; }
    /// The resource blocks come from.
    const std::shared_ptr<MemoryResource>& upstream() const noexcept { return upstream_; }
    /// The bytes a request of `size` takes (its size class; `size` itself beyond max_block_size).
    std::size_t block_size(std::size_t size) const noexcept;

    bool is_device_accessible() const noexcept override;
    bool is_host_accessible() const noexcept override;
    bool is_managed() const noexcept override;
    int device_ordinal() const noexcept override;
    /// "caching resource over memory pool of device 0".
    std::string description() const override;

protected:
    CUdeviceptr do_allocate(std::size_t size, CUstream stream) override;
    void do_deallocate(CUdeviceptr pointer, std::size_t size, CUstream stream) override;
    /// close(): release(), so every cached block goes back upstream.
    void do_close() override;

private:
    std::shared_ptr<MemoryResource> upstream_;
    CachingMemoryResourceOptions options_;
    std::shared_ptr<detail::CachingCore> core_;
};

}  // namespace cudacore
