/// @file
/// Many buffer-to-buffer copies enqueued at once, far cheaper than one cuMemcpyAsync per pair
/// when small (docs/memory.md, "How copy_batch copies"). The copies run in stream order as a
/// whole, in no order among themselves: destinations must not overlap.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/memory_location.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace cudacore {

class Stream;

/// When the driver may read a copy's source: in stream order (the default), during the call, or
/// any time after it (the source unchanged until the copy is done).
enum class CopySourceAccessOrder { stream, during_api_call, any };

/// "stream", "during_api_call", "any"; "CopySourceAccessOrder(N)" for other values.
std::string to_string(CopySourceAccessOrder order);

/// The attributes of one copy (location hints are honoured only for managed memory).
struct CopyAttributes {
    /// When the driver may read the source.
    CopySourceAccessOrder source_access_order = CopySourceAccessOrder::stream;
    /// Where the source's pages live; empty: no hint.
    std::optional<MemoryLocation> source_location_hint{};
    /// Where the destination's pages live; empty: no hint.
    std::optional<MemoryLocation> destination_location_hint{};
    /// Prefer overlapping with compute (advisory: integrated GPUs).
    bool prefer_overlap_with_compute = false;

    bool operator==(const CopyAttributes&) const = default;  ///< equal when every field is
    /// "source access order any, source hint device 0, destination hint host".
    std::string description() const;
};

/// One copy of a copy_batch(), destination first.
struct CopyPair {
    Buffer destination{};         ///< copied to (open)
    Buffer source{};              ///< copied from (open, the destination's size)
    CopyAttributes attributes{};  ///< this copy's; the defaults: stream order, no hints
};

/// The pair of the deprecated copy_batch: the source first.
struct [[deprecated("use CopyPair, which puts the destination first")]] BufferCopy {
    Buffer source{};              ///< copied from (open, the destination's size)
    Buffer destination{};         ///< copied to (open)
    CopyAttributes attributes{};  ///< this copy's; the defaults: stream order, no hints
};

/// The largest pair cudacore's kernels copy (one warp a pair); larger go to the copy engines.
inline constexpr std::size_t copy_batch_kernel_limit = 4096;

/// How copy_batch() splits its copies between the copy kernel and the copy engines.
struct BatchedCopyOptions {
    /// Every pair to the copy engines, to overlap with kernels rather than take SMs from them.
    bool prefer_overlap_with_compute = false;
};

/// Enqueues `copies` on `stream`, keeping nothing alive. InvalidArgumentError naming the pair and
/// both buffers, before anything is enqueued; DriverError naming the call; NoDriverError.
void copy_batch(std::span<const CopyPair> copies, const Stream& stream, const BatchedCopyOptions& options = {});

/// Deprecated form whose pairs put the source first (copied into CopyPairs).
// Naming the deprecated pair here is not a use of it: only the caller's use is.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
[[deprecated("use copy_batch(std::span<const CopyPair>, stream, options): CopyPair puts the destination first")]]
void copy_batch(std::span<const BufferCopy> copies, const Stream& stream, const BatchedCopyOptions& options = {});
#pragma GCC diagnostic pop

}  // namespace cudacore
