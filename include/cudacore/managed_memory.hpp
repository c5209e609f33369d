/// @file
/// Controls for managed memory: advice, batched prefetch and discard, range attributes. Every
/// call throws InvalidArgumentError (a closed buffer), DriverError (naming call and location).
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

/// The advice advise() gives; each set_ has its unset_.
enum class ManagedAdvice {
    set_read_mostly,           ///< read-only copies may be made on every accessing processor
    unset_read_mostly,
    set_preferred_location,    ///< pages stay at `location` when possible
    unset_preferred_location,
    set_accessed_by,           ///< `location` (a device) keeps a mapping, avoiding faults
    unset_accessed_by,
};

/// "set_read_mostly", ...; "ManagedAdvice(N)" outside the enumeration.
std::string to_string(ManagedAdvice advice);

/// Advice over the whole buffer (`location` ignored by read-mostly and unset-preferred).
void advise(const Buffer& buffer, ManagedAdvice advice,
            const MemoryLocation& location = MemoryLocation::host());

/// Migrates every buffer's pages to `location`, in one batch, ordered on `stream`.
void prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                    const Stream& stream);
/// Tells the driver the buffers' contents are no longer needed, so migrations skip them.
void discard_batch(std::span<const Buffer> buffers, const Stream& stream);
/// Both: discards, then places the (now undefined) pages at `location`.
void discard_and_prefetch_batch(std::span<const Buffer> buffers, const MemoryLocation& location,
                                const Stream& stream);

/// What the driver records for a buffer's range.
struct ManagedRangeAttributes {
    bool read_mostly = false;  ///< every page of the range is read-mostly
    /// The preferred location of the whole range; empty when none or the pages disagree.
    std::optional<MemoryLocation> preferred_location{};
    /// Where the range was last prefetched to; empty when never, or not all of it.
    std::optional<MemoryLocation> last_prefetch_location{};
    std::vector<int> accessed_by{};  ///< device ordinals with set_accessed_by
};
/// The range attributes of the whole buffer (accessed_by lists devices only).
ManagedRangeAttributes range_attributes(const Buffer& buffer);

}  // namespace cudacore
