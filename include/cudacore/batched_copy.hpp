// Many buffer-to-buffer copies enqueued in one driver call (cuMemcpyBatchAsync), which costs far
// less than one cuMemcpyAsync per pair when the copies are small.
//
// The copies run in stream order as a whole (each source is read after the work already queued
// on the stream), in no particular order among themselves, so destinations must not overlap.
// On the legacy default stream, which cuMemcpyBatchAsync refuses, the copies are enqueued one by
// one with cuMemcpyAsync instead.
//
// Errors: a closed buffer or a pair of different sizes throws InvalidArgumentError naming the
// pair's index and both buffers, before anything is enqueued. A driver failure throws
// DriverError naming cuMemcpyBatchAsync and the batch; since CUDA 13 the driver no longer says
// which copy failed (the CUDA 12.8 failIdx output is gone), so the message names the batch.
#pragma once

#include "cudacore/buffer.hpp"

#include <span>

namespace cudacore {

class Stream;

struct BufferCopy {
    Buffer source;
    Buffer destination;
};

struct BatchedCopyOptions {
    // CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE: a hint that the copies should overlap with
    // kernels (copy engines rather than SMs), which the driver may ignore.
    bool prefer_overlap_with_compute = false;
};

void copy_batch(std::span<const BufferCopy> copies, const Stream& stream,
                const BatchedCopyOptions& options = {});

}  // namespace cudacore
