/// @file
/// Many buffer-to-buffer copies enqueued at once, which costs far less than one cuMemcpyAsync
/// per pair when the copies are small.
///
/// How: pairs of up to copy_batch_kernel_limit bytes whose two buffers are memory of the stream's
/// device (device pools, managed and virtual memory of that device) are copied by cudacore's own
/// kernels, one launch per 1,360 pairs, with the pairs passed in the launch's parameters (nothing uploaded first, so it
/// is valid inside a stream capture too). The other pairs (larger ones, host memory, another
/// device's memory, buffers without that information) go to the copy engines in one
/// cuMemcpyBatchAsync. With `prefer_overlap_with_compute` every pair goes to the copy engines.
/// Where the kernels are missing (a build without nvcc) or the driver cannot load them, every
/// pair goes to the driver.
///
/// The copies run in stream order as a whole (each source is read after the work already queued
/// on the stream), in no particular order among themselves, so destinations must not overlap
/// each other or any source. Pairs of size 0 are skipped. On the legacy default stream, which
/// cuMemcpyBatchAsync refuses, the driver's pairs are enqueued one by one with cuMemcpyAsync.
///
/// Per-copy attributes (cuda.core's CopyOptions, one per copy or the same for all): each pair
/// carries CopyAttributes, which reach the driver as cuMemcpyBatchAsync's CUmemcpyAttributes
/// (equal neighbours given once, as cuda.core does). A pair with attributes other than the
/// defaults always goes to the copy engines (the kernels honour no hint). On the legacy default
/// stream, where the pairs are enqueued one by one, such attributes have nowhere to go and are
/// refused (InvalidArgumentError naming the pair) rather than dropped, as cuda.core refuses
/// options where cuMemcpyBatchAsync cannot be used.
///
/// Errors: a closed buffer, a pair of different sizes or an attribute out of range throws
/// InvalidArgumentError naming the pair's index and both buffers, before anything is enqueued. A
/// driver failure throws DriverError naming the call (cuLaunchKernel or cuMemcpyBatchAsync) and
/// the first pair it was given; since CUDA 13 the driver no longer says which copy of a batch
/// failed.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/memory_location.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace cudacore {

class Stream;

/// When the driver may read a copy's source (CUmemcpySrcAccessOrder; cuda.core's
/// MemcpySrcAccessOrder). stream: in stream order, after the work queued before (the default).
/// during_api_call: during the copy_batch call, out of stream order (no earlier work may still
/// use the source). any: whenever the driver likes once the call returned; the source must stay
/// unchanged until the copy is done in stream order, and no earlier work may still use it.
enum class CopySourceAccessOrder { stream, during_api_call, any };

/// "stream", "during_api_call", "any"; "CopySourceAccessOrder(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(CopySourceAccessOrder order);

/// The attributes of one copy (cuda.core's CopyOptions). Location hints say where the source's
/// and the destination's pages live; the driver honours them only for managed memory on devices
/// with concurrent managed access (and system-allocated memory on devices that can reach
/// pageable memory), ignores them elsewhere, and never prefetches or advises because of them.
struct CopyAttributes {
    /// CUmemcpyAttributes::srcAccessOrder.
    CopySourceAccessOrder source_access_order = CopySourceAccessOrder::stream;
    /// Where the source's pages live (srcLocHint); empty: no hint.
    std::optional<MemoryLocation> source_location_hint{};
    /// Where the destination's pages live (dstLocHint); empty: no hint.
    std::optional<MemoryLocation> destination_location_hint{};
    /// CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE for this copy (advisory: integrated GPUs).
    bool prefer_overlap_with_compute = false;

    /// Equal when every field is.
    bool operator==(const CopyAttributes&) const = default;
    /// "source access order any, source hint device 0, destination hint host".
    std::string description() const;
};

/// One copy of a copy_batch(): destination, source (destination first, as in every copy of
/// cudacore) and its CopyAttributes.
struct CopyPair {
    Buffer destination{};         ///< copied to (open)
    Buffer source{};              ///< copied from (open, the destination's size)
    CopyAttributes attributes{};  ///< this copy's; the defaults: stream order, no hints
};

/// The pair the deprecated copy_batch(std::span<const BufferCopy>, ...) takes: the source first.
struct [[deprecated("use CopyPair, which puts the destination first")]] BufferCopy {
    Buffer source{};              ///< copied from (open, the destination's size)
    Buffer destination{};         ///< copied to (open)
    CopyAttributes attributes{};  ///< this copy's; the defaults: stream order, no hints
};

/// The largest pair cudacore's kernels copy (one warp a pair): larger ones go to the copy engines,
/// which copy one faster than a warp does.
inline constexpr std::size_t copy_batch_kernel_limit = 4096;

/// How copy_batch() splits its copies between the copy kernel and the copy engines.
struct BatchedCopyOptions {
    /// Every pair to the copy engines (no kernel), with CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE:
    /// for copies that should overlap with kernels rather than take SMs from them.
    bool prefer_overlap_with_compute = false;
};

/// Enqueues `copies` on `stream` (see above). Throws InvalidArgumentError (closed buffers or
/// stream, sizes, attributes), DriverError, NoDriverError. Keeps nothing alive: the buffers must
/// stay open until the stream has done the copies, as for Buffer::copy_to. Thread-safe.
void copy_batch(std::span<const CopyPair> copies, const Stream& stream, const BatchedCopyOptions& options = {});

/// The earlier form, whose pairs put the source first: copies them into CopyPairs (an allocation
/// per call) and does what copy_batch(pairs, stream, options) does.
// Naming the deprecated pair here is not a use of it: only the caller's use is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
[[deprecated("use copy_batch(std::span<const CopyPair>, stream, options): CopyPair puts the destination first")]]
void copy_batch(std::span<const BufferCopy> copies, const Stream& stream, const BatchedCopyOptions& options = {});
#pragma GCC diagnostic pop

}  // namespace cudacore
