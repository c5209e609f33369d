// What CachingMemoryResource asks of the driver off its hot path: events that say when a block
// freed on one stream may go to another, and waiting for the device before cached blocks go back
// upstream. An interface so that tests can run the cache's logic on host memory with no driver
// (CachingMemoryResourceTesting below; this header is not installed).
#pragma once

#include "cudacore/caching_memory_resource.hpp"

#include <cuda.h>

#include <memory>

namespace cudacore::detail {

struct CachingStreamOps {
    virtual ~CachingStreamOps() = default;
    // An event recorded on `stream` now (taken from those recycled, else created). Throws
    // DriverError.
    virtual CUevent record(CUstream stream) = 0;
    // Whether the work before the event's record is done. Throws DriverError for a failure other
    // than "not ready".
    virtual bool done(CUevent event) = 0;
    // Takes back an event that nothing waits for any more (kept for the next record).
    virtual void recycle(CUevent event) noexcept = 0;
    // Waits until the device has finished every piece of work queued so far. Throws DriverError.
    virtual void synchronize() = 0;
};

// The driver's: events and waiting in the primary context of device `ordinal` (held).
std::shared_ptr<CachingStreamOps> driver_caching_stream_ops(int ordinal);

// The tests' seam: a CachingMemoryResource whose events and waits for the device go through
// `ops` (null: the driver's, in the primary context of the upstream's device). Throws as the
// public constructor.
struct CachingMemoryResourceTesting {
    static std::shared_ptr<CachingMemoryResource> make(std::shared_ptr<MemoryResource> upstream,
                                                       const CachingMemoryResourceOptions& options,
                                                       std::shared_ptr<CachingStreamOps> ops);
};

}  // namespace cudacore::detail
