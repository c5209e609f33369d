/// @file
/// DLPack interchange, no copy either way, no driver needed. InvalidArgumentError naming the
/// problem; a refused tensor is not consumed. Details: docs/memory.md, "DLPack".
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
    std::uint64_t byte_offset = 0;  ///< bytes from the buffer's start to the first element
};

/// Exports `buffer` as a new DLManagedTensor holding it until the consumer calls its deleter.
DLManagedTensor* to_dlpack(const Buffer& buffer, const DLPackLayout& layout);
/// Imports `tensor` as a Buffer that calls its deleter when the last copy goes or at close().
Buffer from_dlpack(DLManagedTensor* tensor);

/// The bytes a tensor spans from data + byte_offset (0 when a dimension is 0).
std::size_t dlpack_extent_bytes(const DLTensor& tensor);

}  // namespace cudacore
