/// @file
/// Part of a Buffer: `slice(buffer, offset, size)` is a Buffer of `size` bytes at `offset`,
/// accepted wherever a Buffer is; it holds its owner's memory and answers as its owner does.
/// close() on a slice ends that slice; on the owner it frees the memory and closes every slice,
/// which must not race their uses. Guide: docs/memory.md, "Part of a buffer: slices".
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>
#include <optional>

namespace cudacore {

/// `size` bytes of `buffer` from byte `offset`, without a driver call. InvalidArgumentError when
/// `buffer` is closed or the range is outside it. Thread-safe.
Buffer slice(const Buffer& buffer, std::size_t offset, std::size_t size);

/// From byte `offset` to the end of `buffer`; throws as above.
Buffer slice(const Buffer& buffer, std::size_t offset);

/// Where a slice lies: its owner (a new copy, holding it) and its offset there.
struct SliceOrigin {
    Buffer owner{};           ///< the allocation's own Buffer (never itself a slice)
    std::size_t offset = 0;   ///< the slice's first byte in `owner`
};

/// The owner and offset of a slice, or nullopt for another buffer; InvalidArgumentError for a
/// closed slice. Thread-safe.
std::optional<SliceOrigin> slice_origin(const Buffer& buffer);

}  // namespace cudacore
