/// @file
/// TensorMap: a CUtensorMap descriptor for bulk tensor copies (TMA) over a Buffer it holds,
/// innermost dimension first. Guide (and the alignment to keep): docs/memory.md.
///
///     TensorMap map = TensorMap::tiled(buffer, {.element_type = TensorDataType::float32,
///                                               .shape = {cols, rows},      // innermost first
///                                               .box = {32, 16}});          // the tile
///     launch(stream, config, kernel, map, out);  // kernel(const __grid_constant__ CUtensorMap m, ...)
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
/// "float32", ...; "TensorDataType(N)" outside the enumeration.
std::string to_string(TensorDataType type);

/// Interleaved layout of the innermost dimension (not none: rank 3..5).
enum class TensorMapInterleave { none, bytes16, bytes32 };

/// "none", "bytes16", "bytes32"; "TensorMapInterleave(N)" outside the enumeration.
std::string to_string(TensorMapInterleave interleave);
/// Shared memory bank swizzle: 16-byte chunks swizzled within a 32, 64 or 128-byte span.
enum class TensorMapSwizzle { none, bytes32, bytes64, bytes128 };

/// "none", "bytes32", "bytes64", "bytes128"; "TensorMapSwizzle(N)" outside the enumeration.
std::string to_string(TensorMapSwizzle swizzle);
/// How far L2 fetches are widened.
enum class TensorMapL2Promotion { none, bytes64, bytes128, bytes256 };

/// "none", "bytes64", "bytes128", "bytes256"; "TensorMapL2Promotion(N)" outside it.
std::string to_string(TensorMapL2Promotion promotion);
/// Out-of-bound elements read as zero, or (floating point only) as a NaN that FMA treats as zero.
enum class TensorMapOobFill { zero, nan_request_zero_fma };

/// "zero", "nan_request_zero_fma"; "TensorMapOobFill(N)" outside the enumeration.
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
    /// Bounding-box offsets from the lower corner, one per spatial dimension (rank - 2 values).
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

/// A CUtensorMap for TMA, holding its Buffer. Every rule the host can check is, first
/// (InvalidArgumentError naming the field), then DriverError, NoDriverError. Thread-safe to read.
class TensorMap {
public:
    /// A tiled map over `buffer` (open and device-accessible); the map holds the buffer.
    static TensorMap tiled(const Buffer& buffer, const TensorMapOptions& options);
    /// An im2col map over `buffer`; the map holds the buffer.
    static TensorMap im2col(const Buffer& buffer, const TensorMapIm2colOptions& options);

    /// Points the map at `buffer`, keeping its layout. Not thread-safe on this object.
    void replace_address(const Buffer& buffer);

    /// The 128-byte descriptor, as a kernel receives it.
    const CUtensorMap& descriptor() const noexcept { return descriptor_; }
    /// The buffer the map points at (held by the map).
    const Buffer& buffer() const noexcept { return buffer_; }
    /// Number of dimensions, 1..5.
    std::uint32_t rank() const noexcept { return rank_; }
    /// The element type it was encoded with.
    TensorDataType element_type() const noexcept { return element_type_; }
    /// Bytes from the first element to the end of the last: the least replace_address needs.
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
