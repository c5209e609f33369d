/// @file
/// Controls for managed memory: advice (cuMemAdvise), batched prefetch and discard
/// (cuMemPrefetchBatchAsync...), and range attributes (cuMemRangeGetAttribute). Buffers must be
/// managed memory; batches are one driver call on `stream` (one per buffer on the legacy stream)
/// and need CONCURRENT_MANAGED_ACCESS (else DriverError). Errors: InvalidArgumentError for a
/// closed buffer; DriverError naming the call, the buffer or batch size and the location.
#pragma once

#include "cudacore/memory_location.hpp"

#include <cuda.h>

#include <optional>
#include <span>
#include <vector>
#include <string>

namespace cudacore {

class Buffer;
class Device;
class Stream;

/// The advice advise() gives (CU_MEM_ADVISE_SET_READ_MOSTLY, ...): each set_ has its unset_.
enum class ManagedAdvice {
    set_read_mostly,           ///< read-only copies may be made on every accessing processor
    unset_read_mostly,
    set_preferred_location,    ///< pages stay at `location` when possible
    unset_preferred_location,
    set_accessed_by,           ///< `location` (a device) keeps a mapping, avoiding faults
    unset_accessed_by,
};

/// "set_read_mostly", "unset_read_mostly", "set_preferred_location", "unset_preferred_location",
/// "set_accessed_by", "unset_accessed_by"; "ManagedAdvice(N)" for a value outside the enumeration.
/// Never throws beyond std::bad_alloc.
std::string to_string(ManagedAdvice advice);

/// cuMemAdvise(_v2) over the whole buffer. `location` is ignored by the read-mostly and unset
/// preferred location advice.
void advise(const Buffer& buffer, ManagedAdvice advice,
            const MemoryLocation& location = MemoryLocation::host());

/// Migrates every buffer's pages to `location`, in one batch, ordered on `stream`.
void prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                    const Stream& stream);
/// Tells the driver the buffers' contents are no longer needed (later reads see unspecified
/// values), so migrations skip copying them.
void discard_batch(std::span<const Buffer> buffers, const Stream& stream);
/// Both: discards, then places the (now undefined) pages at `location`.
void discard_and_prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                                const Stream& stream);

/// What the driver records for a buffer's range.
struct ManagedRangeAttributes {
    /// Every page of the range is read-mostly (CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY).
    bool read_mostly = false;
    /// The preferred location of the whole range; empty when none is set or the pages disagree
    /// (CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE / _ID).
    std::optional<MemoryLocation> preferred_location{};
    /// Where the range was last prefetched to; empty when never, or not all of it
    /// (CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE / _ID).
    std::optional<MemoryLocation> last_prefetch_location{};
    std::vector<int> accessed_by{};  ///< device ordinals with set_accessed_by
};
/// The range attributes of the whole buffer (cuMemRangeGetAttribute, in the buffer's context).
/// accessed_by lists devices only (a host entry is left out). InvalidArgumentError when the
/// buffer is closed, DriverError when a query fails.
ManagedRangeAttributes range_attributes(const Buffer& buffer);

}  // namespace cudacore
