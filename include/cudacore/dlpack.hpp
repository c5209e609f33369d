/// @file
/// DLPack interchange (DLPack's own header, dlpack/dlpack.h): a Buffer exported as a
/// DLManagedTensor for another library, and a DLManagedTensor from another library imported as a
/// Buffer. No copy either way.
///
/// Export: the caller gives the element type, the shape and optionally the strides (in elements;
/// empty means compact row-major); the tensor holds a copy of the Buffer, so the memory stays
/// valid until the consumer calls tensor->deleter(tensor), exactly once. Device type: managed
/// memory kDLCUDAManaged, memory both host and device accessible kDLCUDAHost, device memory
/// kDLCUDA (device_id the buffer's device), host-only memory kDLCPU.
///
/// Import: the Buffer covers the bytes the tensor spans (from data + byte_offset to its last
/// element) and calls the producer's deleter when its last copy goes or at close(); the producer
/// stays alive until then. The deleter is called without waiting for any stream: synchronise work
/// using the memory first. kDLCPU, kDLCUDA, kDLCUDAHost and kDLCUDAManaged are accepted.
///
/// Errors: InvalidArgumentError naming the problem (a closed buffer; a layout whose extent exceeds
/// the buffer; negative dimensions or strides; strides of another rank; an element type that is
/// not whole bytes; a null tensor or data; an unsupported device type; an empty tensor). A tensor
/// refused by from_dlpack is not consumed: its deleter is not called. Needs no driver.
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
