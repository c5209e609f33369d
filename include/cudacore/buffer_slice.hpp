/// @file
/// Part of a Buffer: `slice(buffer, offset, size)` is a Buffer of `size` bytes at `offset`,
/// accepted wherever a Buffer is. A slice holds its owner's memory and owns none: close() on a
/// slice ends that slice only; close() on the owner frees the memory and closes every slice. A
/// slice answers as its owner does (device, resource, deallocation stream); export_buffer refuses
/// it. Copies of a slice compare equal. Made from several threads at once like copies; closing the
/// owner must not race uses of its slices. Guide: docs/memory.md, "Part of a buffer: slices".
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>
#include <optional>

namespace cudacore {

/// `size` bytes of `buffer` from byte `offset`: a Buffer holding `buffer`'s allocation, made
/// without a driver call or heap allocation (size 0: an empty, open buffer). Throws
/// InvalidArgumentError when `buffer` is closed or empty, or the range is outside it. Thread-safe.
Buffer slice(const Buffer& buffer, std::size_t offset, std::size_t size);

/// `buffer.size() - offset` bytes of `buffer` from byte `offset` (to its end); throws as above.
Buffer slice(const Buffer& buffer, std::size_t offset);

/// Where a slice lies: the buffer it is part of (a new copy of the owner, holding it) and its
/// offset there.
struct SliceOrigin {
    Buffer owner{};           ///< the allocation's own Buffer (never itself a slice)
    std::size_t offset = 0;   ///< the slice's first byte in `owner`
};

/// The owner and offset of a slice; std::nullopt for a buffer that is not a slice (an
/// allocation, a wrapped or imported buffer, an empty one). Throws InvalidArgumentError for a
/// closed slice (its owner is let go of at close). Thread-safe.
std::optional<SliceOrigin> slice_origin(const Buffer& buffer);

}  // namespace cudacore
