/// @file
/// PinnedMemoryResource: the deprecated name of LegacyPinnedMemoryResource; next release it names
/// the pool-backed resource, as in cuda.core and CCCL (docs/api-conventions.md).
#pragma once

#include "cudacore/legacy_pinned_memory_resource.hpp"

namespace cudacore {

/// The cuMemHostAlloc resource under its earlier name.
using PinnedMemoryResource [[deprecated(
    "use LegacyPinnedMemoryResource (the same resource); next release PinnedMemoryResource names the "
    "pool-backed one, PinnedMemoryPoolResource today, as in cuda.core and CCCL")]] = LegacyPinnedMemoryResource;

}  // namespace cudacore
