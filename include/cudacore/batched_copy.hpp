/// @file
/// Many buffer-to-buffer copies enqueued at once, far cheaper than one cuMemcpyAsync per pair
/// when small: small pairs in device memory by cudacore's kernels, the rest by one
/// cuMemcpyBatchAsync (docs/memory.md, "How copy_batch copies"). The copies run in stream order
/// as a whole, in no order among themselves: destinations must not overlap. Errors:
/// InvalidArgumentError naming the pair's index and both buffers before anything is enqueued;
/// DriverError naming the call and the first pair.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/memory_location.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace cudacore {

class Stream;

/// When the driver may read a copy's source (CUmemcpySrcAccessOrder): stream (in stream order,
/// the default), during_api_call (during the call), any (whenever after the call; the source
/// must stay unchanged until the copy is done).
enum class CopySourceAccessOrder { stream, during_api_call, any };

/// "stream", "during_api_call", "any"; "CopySourceAccessOrder(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(CopySourceAccessOrder order);

/// The attributes of one copy (cuda.core's CopyOptions). Location hints say where the pages
/// live; the driver honours them only for managed memory and never prefetches because of them.
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

/// Deprecated form whose pairs put the source first: copies them into CopyPairs (an allocation
/// per call) and does what copy_batch(pairs, stream, options) does.
// Naming the deprecated pair here is not a use of it: only the caller's use is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
[[deprecated("use copy_batch(std::span<const CopyPair>, stream, options): CopyPair puts the destination first")]]
void copy_batch(std::span<const BufferCopy> copies, const Stream& stream, const BatchedCopyOptions& options = {});
#pragma GCC diagnostic pop

}  // namespace cudacore
