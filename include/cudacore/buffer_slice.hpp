/// @file
/// Part of a Buffer: `slice(buffer, offset, size)` is a Buffer of `size` bytes at `offset` in
/// `buffer`'s memory, accepted wherever a Buffer is (copies, fills, kernel arguments, copy_batch,
/// DLPack, strided views, graph nodes), so part of a buffer is copied or filled without
/// wrap_unowned(handle + offset, ...).
///
/// Lifetime: a slice holds the buffer it was cut from (the allocation, as one more copy does):
/// the memory stays while the slice lives, even when every copy of the owner is dropped. A
/// slice of a slice is a slice of the same owner, at the sum of the offsets.
///
/// Closing (docs/errors-and-lifetime.md, "Closing and resetting"): close() on a slice ends the
/// slice for every copy of the slice and drops its hold on the owner; it never frees the
/// owner's memory (a slice owns none: owns_memory() is false), nor does it close the owner or
/// other slices. close() on the owner frees the memory now, for every copy of the owner and every
/// slice of it: the slices are closed from then on (is_closed() true, handle() 0, their uses
/// throw InvalidArgumentError). Only the owner frees, so the one close stays one.
///
/// A slice answers as its owner does: device, accessibility, memory resource; its
/// deallocation_stream() and set_deallocation_stream() are the owner's (the stream the memory is
/// freed on). A slice is not an allocation: export_buffer (pool IPC) refuses it; the ordinary
/// allocations' IPC (export_memory, ipc.hpp) carries its offset. Copies of a slice compare
/// equal (and hash alike); a slice equals neither its owner nor another slice of the same range.
///
/// Thread-safety: slices may be made from several threads at once, as copies; closing the owner
/// must not race with uses of its slices, as it must not with uses of its copies.
#pragma once

#include "cudacore/buffer.hpp"

#include <cstddef>
#include <optional>

namespace cudacore {

/// `size` bytes of `buffer` from byte `offset`: a Buffer that holds `buffer`'s allocation (see
/// this file's description). No driver call and no heap allocation. A slice of size 0 is an
/// empty, open buffer at that address (copies and fills of it do nothing).
/// Throws InvalidArgumentError when `buffer` is closed or empty, and when the range is outside
/// it ("bytes [offset, offset + size) are outside buffer ... of N bytes"), overflow included.
/// Thread-safe.
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
