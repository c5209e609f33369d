// Many buffer-to-buffer copies enqueued at once, which costs far less than one cuMemcpyAsync
// per pair when the copies are small.
//
// How: pairs of up to copy_batch_kernel_limit bytes whose two buffers are memory of the stream's
// device (device pools, managed and virtual memory of that device) are copied by cudacore's own
// kernels, one launch per 1,360 pairs, with the pairs passed in the launch's parameters (nothing uploaded first, so it
// is valid inside a stream capture too). The other pairs (larger ones, host memory, another
// device's memory, buffers without that information) go to the copy engines in one
// cuMemcpyBatchAsync. With `prefer_overlap_with_compute` every pair goes to the copy engines.
// Where the kernels are missing (a build without nvcc) or the driver cannot load them, every
// pair goes to the driver.
//
// The copies run in stream order as a whole (each source is read after the work already queued
// on the stream), in no particular order among themselves, so destinations must not overlap
// each other or any source. Pairs of size 0 are skipped. On the legacy default stream, which
// cuMemcpyBatchAsync refuses, the driver's pairs are enqueued one by one with cuMemcpyAsync.
//
// Errors: a closed buffer or a pair of different sizes throws InvalidArgumentError naming the
// pair's index and both buffers, before anything is enqueued. A driver failure throws
// DriverError naming the call (cuLaunchKernel or cuMemcpyBatchAsync) and the first pair it was
// given; since CUDA 13 the driver no longer says which copy of a batch failed.
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>

#include <span>

namespace cudacore {

class Stream;

struct BufferCopy {
    Buffer source;
    Buffer destination;
};

// The largest pair cudacore's kernels copy (one warp a pair): larger ones go to the copy engines,
// which copy one faster than a warp does.
inline constexpr std::size_t copy_batch_kernel_limit = 4096;

struct BatchedCopyOptions {
    // Every pair to the copy engines (no kernel), with CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE:
    // for copies that should overlap with kernels rather than take SMs from them.
    bool prefer_overlap_with_compute = false;
};

void copy_batch(std::span<const BufferCopy> copies, const Stream& stream,
                const BatchedCopyOptions& options = {});

}  // namespace cudacore
