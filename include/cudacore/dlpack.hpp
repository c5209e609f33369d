/// @file
/// DLPack interchange (dlpack/dlpack.h), no copy either way: to_dlpack exports a Buffer (held
/// until the consumer calls the deleter once); from_dlpack imports a tensor as a Buffer that calls
/// the producer's deleter when its last copy goes, without waiting for any stream. Errors:
/// InvalidArgumentError naming the problem; a refused tensor is not consumed. No driver needed.
/// Details: docs/memory.md, "DLPack".
#pragma once

#include "cudacore/buffer.hpp"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudacore {

/// Shape, strides and element type of a DLPack tensor made from a Buffer.
struct DLPackLayout {
    std::vector<std::int64_t> shape{};  ///< extent of each dimension, outermost first (row-major)
    /// In elements, one per dimension; empty: compact row-major.
    std::vector<std::int64_t> strides{};
    DLDataType dtype{kDLFloat, 32, 1};  ///< element type: DLPack code, bits, lanes (float32)
    /// Bytes from the buffer's start to the first element.
    std::uint64_t byte_offset = 0;
};

/// Exports `buffer` with `layout` as a new DLManagedTensor that holds a copy of the buffer until
/// its deleter is called (see above). InvalidArgumentError as above.
DLManagedTensor* to_dlpack(const Buffer& buffer, const DLPackLayout& layout);
/// Imports `tensor` as a Buffer that calls its deleter when the last copy goes or at close()
/// (see above). InvalidArgumentError as above; a refused tensor is not consumed.
Buffer from_dlpack(DLManagedTensor* tensor);

/// The bytes a tensor spans from data + byte_offset: (sum over dimensions of (shape-1) * stride,
/// plus one) elements; 0 when a dimension is 0. Throws InvalidArgumentError as above.
std::size_t dlpack_extent_bytes(const DLTensor& tensor);

}  // namespace cudacore
