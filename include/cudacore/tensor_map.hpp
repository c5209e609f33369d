/// @file
/// TensorMap: a CUtensorMap descriptor for Hopper's bulk tensor copies (TMA), made from a Buffer.
///
///     TensorMap map = TensorMap::tiled(buffer, {.element_type = TensorDataType::float32,
///                                               .shape = {cols, rows},      // innermost first
///                                               .box = {32, 16}});          // the tile
///     launch(stream, config, kernel, map, out);  // kernel(const __grid_constant__ CUtensorMap m, ...)
///
/// Dimensions are listed innermost (contiguous) first, as the driver wants them. `strides` are the
/// byte distances between consecutive indices of dimensions 1..rank-1 (rank - 1 values); empty
/// means densely packed. A rank-1 map has no strides (cuda.core's tma_tensor_map example: 1024
/// floats, box 128); the driver still gets a valid stride array, since it refuses a null one.
/// Every rule of cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col that can be checked on the host
/// is checked BEFORE the driver is called, and a violation throws
/// InvalidArgumentError naming the field (TensorMapOptions::box[1], ...) and the value: address
/// aligned to 16 bytes (32 with 32-byte interleave), rank 1..5 (3..5 for im2col or interleave),
/// shape 1..2^32, strides multiples of 16 (32), below 2^40, increasing and not overlapping, the
/// tensor inside the buffer, box 1..256 with inner box bytes a multiple of 16 and within the
/// swizzle span, element strides 1..8, interleave/swizzle combinations, NaN fill only for floating
/// point types. The driver may still refuse (DriverError naming the call); no driver:
/// NoDriverError.
///
/// In the kernel, keep a box's origin in dimension 0 a multiple of 16 bytes: at ranks 4 and 5 a
/// copy from an origin of 56 or 24 bytes (floats 14 and 6, the box overhanging the tensor's end)
/// faulted with CUDA_ERROR_ILLEGAL_INSTRUCTION on an H100 (driver 580), through raw driver calls
/// too; aligned origins, inside or overhanging, copy correctly at every rank (the GPU tests).
///
/// As a kernel argument a TensorMap is passed as its 128-byte CUtensorMap by value; declare the
/// parameter `const __grid_constant__ CUtensorMap` (or TypedKernel<void(CUtensorMap, ...)>).
///
/// Ownership: a TensorMap holds its Buffer (a shared copy), so the memory outlives the map.
/// Kernels still running after the map is dropped read memory the caller keeps valid, as with any
/// launch argument. Copies are cheap values (descriptor + shared buffer); thread-safe to read.
#pragma once

#include "cudacore/buffer.hpp"
#include "cudacore/launch.hpp"

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cudacore {

/// The element types of CUtensorMapDataType (the packed 4- and 6-bit types are not offered).
enum class TensorDataType {
    uint8,
    uint16,
    uint32,
    int32,
    uint64,
    int64,
    float16,
    float32,
    float64,
    bfloat16,
    float32_ftz,
    tfloat32,
    tfloat32_ftz,
};
std::size_t element_size(TensorDataType type);  ///< throws InvalidArgumentError for a bad value
/// "float32", ...; "TensorDataType(N)" for a value outside the enumeration (never throws beyond
/// std::bad_alloc).
std::string to_string(TensorDataType type);

/// Interleaved layout of the innermost dimension (CU_TENSOR_MAP_INTERLEAVE_NONE, _16B, _32B);
/// anything but none needs rank 3..5, and bytes32 an address and strides aligned to 32 bytes.
enum class TensorMapInterleave { none, bytes16, bytes32 };

/// "none", "bytes16", "bytes32"; "TensorMapInterleave(N)" for a value outside the enumeration.
/// Never throws beyond std::bad_alloc.
std::string to_string(TensorMapInterleave interleave);
/// Shared memory bank swizzle: 16-byte chunks swizzled within a 32, 64 or 128-byte span.
enum class TensorMapSwizzle { none, bytes32, bytes64, bytes128 };

/// "none", "bytes32", "bytes64", "bytes128"; "TensorMapSwizzle(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(TensorMapSwizzle swizzle);
/// How far L2 fetches are widened (CU_TENSOR_MAP_L2_PROMOTION_NONE, _L2_64B, _L2_128B, _L2_256B).
enum class TensorMapL2Promotion { none, bytes64, bytes128, bytes256 };

/// "none", "bytes64", "bytes128", "bytes256"; "TensorMapL2Promotion(N)" for a value outside the
/// enumeration. Never throws beyond std::bad_alloc.
std::string to_string(TensorMapL2Promotion promotion);
/// Out-of-bound elements read as zero, or (floating point only) as a NaN that FMA treats as zero.
enum class TensorMapOobFill { zero, nan_request_zero_fma };

/// "zero", "nan_request_zero_fma"; "TensorMapOobFill(N)" for a value outside the enumeration. Never
/// throws beyond std::bad_alloc.
std::string to_string(TensorMapOobFill fill);

/// A tiled map (cuTensorMapEncodeTiled): copies box-shaped tiles.
struct TensorMapOptions {
    TensorDataType element_type = TensorDataType::float32;  ///< CUtensorMapDataType of the elements
    std::vector<std::uint64_t> shape{};          ///< elements per dimension, innermost first
    std::vector<std::uint64_t> strides{};        ///< bytes, dimensions 1..rank-1; empty: packed
    std::vector<std::uint32_t> box{};            ///< elements per dimension of one tile
    std::vector<std::uint32_t> element_strides{};  ///< per dimension, 1..8; empty: all 1
    TensorMapInterleave interleave = TensorMapInterleave::none;        ///< CUtensorMapInterleave
    TensorMapSwizzle swizzle = TensorMapSwizzle::none;                 ///< CUtensorMapSwizzle
    TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::none;    ///< CUtensorMapL2promotion
    TensorMapOobFill oob_fill = TensorMapOobFill::zero;  ///< CUtensorMapFloatOOBfill
};

/// An im2col map (cuTensorMapEncodeIm2col) over an NHWC-like tensor of rank 3..5 (C innermost).
struct TensorMapIm2colOptions {
    TensorDataType element_type = TensorDataType::float16;  ///< CUtensorMapDataType of the elements
    std::vector<std::uint64_t> shape{};  ///< {C, W, H, D, N} order, innermost first
    std::vector<std::uint64_t> strides{};  ///< as in TensorMapOptions
    /// Offsets of the bounding box from the lower and upper corners, one per spatial dimension
    /// (rank - 2 values): within [-32768, 32767] for rank 3, [-128, 127] for 4, [-16, 15] for 5.
    std::vector<int> lower_corner{};
    std::vector<int> upper_corner{};  ///< as lower_corner, from the upper corner
    std::uint32_t channels_per_pixel = 0;  ///< 1..256
    std::uint32_t pixels_per_column = 0;   ///< 1..1024
    std::vector<std::uint32_t> element_strides{};  ///< per dimension, 1..8; empty: all 1
    TensorMapInterleave interleave = TensorMapInterleave::none;        ///< CUtensorMapInterleave
    TensorMapSwizzle swizzle = TensorMapSwizzle::none;                 ///< CUtensorMapSwizzle
    TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::none;    ///< CUtensorMapL2promotion
    TensorMapOobFill oob_fill = TensorMapOobFill::zero;  ///< CUtensorMapFloatOOBfill
};

/// A CUtensorMap for bulk tensor copies (TMA), holding the Buffer it describes.
class TensorMap {
public:
    /// Throws InvalidArgumentError (see above; also for a closed or not device-accessible
    /// buffer), DriverError, NoDriverError.
    static TensorMap tiled(const Buffer& buffer, const TensorMapOptions& options);
    /// An im2col map over `buffer` (cuTensorMapEncodeIm2col); the map holds the buffer. Throws
    /// as tiled(), the corners, channels_per_pixel and pixels_per_column checked too.
    static TensorMap im2col(const Buffer& buffer, const TensorMapIm2colOptions& options);

    /// Points the map at `buffer` instead (cuTensorMapReplaceAddress), keeping its shape,
    /// strides, box and options: cuda.core's TensorMapDescriptor.replace_address, for a sequence
    /// of tensors of one layout (double buffering) without encoding a map for each.
    /// Checked before the driver is called, as the encode checks its buffer: open,
    /// device-accessible, aligned to 16 bytes (32 with interleave bytes32), on the device of the
    /// map's current buffer (memory bound to no device, such as pinned host memory, fits any),
    /// and at least as large as the tensor the map spans (cuda.core does not check the size; a
    /// smaller buffer would let the copy engine read past it). A violation throws
    /// InvalidArgumentError naming both buffers; the driver's refusal, DriverError naming
    /// cuTensorMapReplaceAddress; no driver, NoDriverError.
    /// On success the map holds `buffer` (and drops its shared copy of the old one); on any
    /// failure it is unchanged, still pointing at and holding the old buffer (as cuda.core drops
    /// the old tensor only after the driver call succeeded). Only this object changes: copies of
    /// the map, and launches already made with it (they took the descriptor by value), keep the
    /// old address. Not thread-safe against other uses of this same object.
    void replace_address(const Buffer& buffer);

    /// The 128-byte descriptor, as a kernel receives it.
    const CUtensorMap& descriptor() const noexcept { return descriptor_; }
    /// The buffer the map points at (held by the map).
    const Buffer& buffer() const noexcept { return buffer_; }
    /// Number of dimensions, 1..5.
    std::uint32_t rank() const noexcept { return rank_; }
    /// The element type it was encoded with.
    TensorDataType element_type() const noexcept { return element_type_; }
    /// Bytes from the first element of the tensor to the end of its last: the least a buffer
    /// given to replace_address must hold.
    std::uint64_t span_bytes() const noexcept { return span_bytes_; }

private:
    TensorMap() = default;
    CUtensorMap descriptor_{};  ///< 128-byte aligned, as the driver and the kernel want it
    Buffer buffer_;
    std::uint32_t rank_ = 0;
    TensorDataType element_type_ = TensorDataType::float32;
    std::uint64_t span_bytes_ = 0;
    unsigned alignment_ = 16;  ///< the address alignment the encode required
    int device_ordinal_ = -1;  ///< the tensor's device; -1: memory bound to no device
};

/// launch() passes a TensorMap as its CUtensorMap (a reference: no copy on the launch path).
template <class T>
    requires std::is_same_v<T, TensorMap>
struct KernelArgument<T> {
    /// The map's descriptor, by reference (valid while the map lives).
    static const CUtensorMap& convert(const T& map) noexcept { return map.descriptor(); }
};

}  // namespace cudacore
