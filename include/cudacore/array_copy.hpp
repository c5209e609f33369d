/// @file
/// Copies between CUDA arrays and linear memory (a Buffer or host memory), and between arrays,
/// stream-ordered. Destination first, then source, stream, layout. Everything is checked first
/// (InvalidArgumentError naming the call, both sides and the value), then DriverError. The arrays
/// are held until the copy is done; host memory and Buffers are the caller's to keep valid.
/// Thread-safe. Guide: docs/memory.md, "Arrays, textures and surfaces".
///
///     // a 64 x 32 float image from host rows of 80 floats (a pitch of 320 bytes)
///     copy_to_array(image, host.data(), host.size() * sizeof(float), stream, {.pitch = 320});
///     copy_from_array(buffer, image, stream);  // packed rows into a device buffer
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/stream.hpp"

#include <cstddef>

namespace cudacore {

/// A box of elements inside a CUDA array; zero extents run to the array's end.
struct ArrayRegion {
    std::size_t x = 0;       ///< first element along the width
    std::size_t y = 0;       ///< first row (0 for 1D and 1D layered arrays)
    std::size_t z = 0;       ///< first slice, layer or cubemap face
    std::size_t width = 0;   ///< elements per row; 0: to the end of the row
    std::size_t height = 0;  ///< rows; 0: to the last row
    std::size_t depth = 0;   ///< slices, layers or faces; 0: to the last one
};

/// How the region lies in linear memory.
struct LinearLayout {
    std::size_t offset = 0;  ///< bytes from the start of the memory to the first row
    std::size_t pitch = 0;   ///< bytes from one row to the next; 0: packed rows
    std::size_t rows = 0;    ///< rows from one slice to the next; 0: the region's height
};

/// Copies `source` (a device, pinned or managed Buffer) into `region` of `destination`.
void copy_to_array(const CudaArray& destination, const Buffer& source, const Stream& stream,
                   const LinearLayout& layout = {}, const ArrayRegion& region = {});
/// Copies `host_bytes` of host memory at `host` (not null) into `region` of `destination`.
void copy_to_array(const CudaArray& destination, const void* host, std::size_t host_bytes,
                   const Stream& stream, const LinearLayout& layout = {},
                   const ArrayRegion& region = {});
/// Copies `region` of `source` into `destination` (a device, pinned or managed Buffer).
void copy_from_array(const Buffer& destination, const CudaArray& source, const Stream& stream,
                     const LinearLayout& layout = {}, const ArrayRegion& region = {});
/// Copies `region` of `source` into `host_bytes` of host memory at `host`.
void copy_from_array(void* host, std::size_t host_bytes, const CudaArray& source, const Stream& stream,
                     const LinearLayout& layout = {}, const ArrayRegion& region = {});
/// Copies `source_region` of `source` to `destination` at destination_origin (whose extents are 0
/// or the source region's), on one device with formats of one element size.
void copy_between_arrays(const CudaArray& destination, const CudaArray& source, const Stream& stream,
                         const ArrayRegion& destination_origin = {}, const ArrayRegion& source_region = {});

/// Deprecated form with the source first.
[[deprecated("use copy_from_array(destination, source, stream, layout, region)")]]
void copy_from_array(const CudaArray& source, const Buffer& destination, const Stream& stream,
                     const LinearLayout& layout = {}, const ArrayRegion& region = {});
/// Deprecated form with the source first.
[[deprecated("use copy_from_array(host, host_bytes, source, stream, layout, region)")]]
void copy_from_array(const CudaArray& source, void* host, std::size_t host_bytes, const Stream& stream,
                     const LinearLayout& layout = {}, const ArrayRegion& region = {});
/// Deprecated name, with the source first.
[[deprecated("use copy_between_arrays(destination, source, stream, destination_origin, source_region)")]]
void copy_array(const CudaArray& source, const CudaArray& destination, const Stream& stream,
                const ArrayRegion& source_region = {}, const ArrayRegion& destination_origin = {});

}  // namespace cudacore
