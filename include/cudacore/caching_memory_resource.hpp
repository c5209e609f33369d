/// @file
/// CachingMemoryResource: a caching sub-allocator over another memory resource (by default a
/// device's memory pool) that keeps freed blocks for reuse, per thread, so that many threads
/// allocating at once do not meet in the driver.
///
/// When to choose it over the driver pool (DeviceMemoryResource): the driver's pool serialises
/// its callers, so from several threads at once allocate + free costs each thread more the more
/// threads there are (on an H100, 16 threads together allocate fewer buffers per second than one
/// thread alone). This resource serves repeated sizes from a cache of the calling thread, without
/// a driver call or a lock that another thread takes. Choose it for many threads (or one thread)
/// allocating and freeing blocks of similar sizes at a high rate: query engines, inference
/// servers. Keep the driver pool when memory must go back to the device as soon as it is freed,
/// when sizes never repeat, when memory is shared between processes (IPC), or for graphs.
/// Its cost: cached memory stays reserved (bounded by the options below, given back by release()),
/// and each block is rounded up to its size class (a multiple of 256 bytes up to 1 KiB, then at
/// most a quarter more: 1 MiB + 1 byte takes 1.25 MiB).
///
/// How it works. Sizes up to max_block_size are rounded up to a size class (four classes per
/// power of two, from 256 bytes); larger ones go to the upstream resource directly, uncached.
/// Every block is one upstream allocation, never split nor merged, so there is no fragmentation
/// inside the cache. A freed block is kept by the freeing thread's arena (up to
/// max_thread_cached_bytes), else by the shared arena (up to max_cached_bytes), else given back to
/// the upstream resource at once, in stream order. Reuse follows stream order, as the driver's
/// pool does:
/// - a block freed on stream S is handed out again for S at once (work on S runs after the
///   free);
/// - on another stream only once an event recorded on S at the free has completed (blocks kept by
///   the shared arena carry one; blocks kept by a thread's arena are for their own stream). The
///   per-thread default stream (CU_STREAM_PER_THREAD) is a different stream on each thread: its
///   blocks move between threads only through events.
/// A stream destroyed while blocks freed on it are cached leaves them for its stream handle; the
/// driver releases a destroyed stream only once its work is done, so a stream that later gets
/// the same handle finds blocks whose earlier work is over. release() gives them back.
/// When the upstream resource runs out of memory (CUDA_ERROR_OUT_OF_MEMORY), the resource
/// releases every cached block and tries once more.
///
/// Ownership: create it with std::make_shared (or create()). It holds its upstream resource; its
/// buffers hold it (MemoryResource's rule), so it outlives its memory. Cached blocks are given back
/// to the upstream resource by release() and when the resource is destroyed (after waiting for
/// the device; errors ignored).
///
/// Thread-safety: every function may be called from any thread at once. A thread's arena is
/// locked only by its thread, except by release() and statistics(), which visit every arena.
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
