// What CachingMemoryResource asks of the driver off its hot path: events that say when a block
// freed on one stream may go to another, and waiting for the device before cached blocks go back
// upstream. An interface so that tests can run the cache's logic on host memory with no driver
// (ScopedCachingStreamOps below; this header is not installed).
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

// What a CachingMemoryResource made now on this thread takes its events and waits from: the ops
// a ScopedCachingStreamOps set, else the driver's in the primary context of device `ordinal`
// (device 0 for an upstream of none).
std::shared_ptr<CachingStreamOps> caching_stream_ops_for(int ordinal);

// The tests' seam: while it lives, CachingMemoryResources made on this thread use `ops` for their
// events and waits for the device (null: the driver's, as without it). Not copyable.
class ScopedCachingStreamOps {
public:
    explicit ScopedCachingStreamOps(std::shared_ptr<CachingStreamOps> ops);
    ~ScopedCachingStreamOps();
    ScopedCachingStreamOps(const ScopedCachingStreamOps&) = delete;
    ScopedCachingStreamOps& operator=(const ScopedCachingStreamOps&) = delete;

private:
    std::shared_ptr<CachingStreamOps> previous_;
};

}  // namespace cudacore::detail
