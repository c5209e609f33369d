/// @file
/// The name PinnedMemoryResource, which cudacore gave to page-locked host memory from
/// cuMemHostAlloc: cuda.core and CCCL call that resource the *legacy* pinned resource
/// (LegacyPinnedMemoryResource here, legacy_pinned_memory_resource.hpp), and call their
/// pool-backed pinned resource PinnedMemoryResource (PinnedMemoryPoolResource here).
///
/// The rename happens in two releases, so that no program changes meaning without a warning:
/// in this one PinnedMemoryResource still names the cuMemHostAlloc resource, deprecated; in the
/// next it names the pool-backed one, as in cuda.core and CCCL.
#pragma once

#include "cudacore/legacy_pinned_memory_resource.hpp"

namespace cudacore {

/// The cuMemHostAlloc resource under its earlier name (see the file comment).
using PinnedMemoryResource [[deprecated(
    "use LegacyPinnedMemoryResource (the same resource); next release PinnedMemoryResource names the "
    "pool-backed one, PinnedMemoryPoolResource today, as in cuda.core and CCCL")]] = LegacyPinnedMemoryResource;

}  // namespace cudacore
