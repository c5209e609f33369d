/// @file
/// CudaArray: a CUDA array (cuArray3DCreate), the opaque layout textures and surfaces read and
/// write (cuda.core's OpaqueArray). Shapes as CUDA_ARRAY3D_DESCRIPTOR (1D: height and depth 0;
/// layered: depth counts layers; cubemap: depth 6). Data moves through array_copy.hpp; guide:
/// docs/memory.md.
///
///     CudaArray image = CudaArray::create(device, {.format = ArrayFormat::float32, .channels = 4,
///                                                  .width = 1024, .height = 768,
///                                                  .surface_load_store = true});
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/array_format.hpp"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

namespace cudacore {

class Context;
class Device;
struct DeviceProperties;

/// The shape, format and flags of a CUDA array (CUDA_ARRAY3D_DESCRIPTOR).
struct ArrayOptions {
    ArrayFormat format = ArrayFormat::float32;  ///< the component format
    /// Channels per element: plain formats 1, 2 or 4 (0 means 1); others their own count.
    unsigned channels = 0;
    std::size_t width = 0;   ///< elements (at least 1)
    std::size_t height = 0;  ///< rows; 0 for a 1D (or 1D layered) array
    std::size_t depth = 0;   ///< slices of a 3D array, layers when layered, 6 (x layers) for a cubemap
    bool layered = false;    ///< CUDA_ARRAY3D_LAYERED: depth counts layers
    bool cubemap = false;    ///< CUDA_ARRAY3D_CUBEMAP: six square faces
    bool surface_load_store = false;  ///< CUDA_ARRAY3D_SURFACE_LDST: can back a SurfaceObject
    bool texture_gather = false;      ///< CUDA_ARRAY3D_TEXTURE_GATHER: 2D arrays for tex2Dgather
};

/// The shape an array has, as the device limits group them.
enum class ArrayShape {
    one_d,             ///< width
    two_d,             ///< width x height
    three_d,           ///< width x height x depth
    one_d_layered,     ///< width, depth layers
    two_d_layered,     ///< width x height, depth layers
    cubemap,           ///< six width x width faces
    cubemap_layered,   ///< depth / 6 cubemaps
};
/// "one_d", "two_d", ...; "ArrayShape(N)" for other values.
std::string to_string(ArrayShape shape);

/// The shape `options` describe; InvalidArgumentError naming `call` for sizes that fit no shape.
ArrayShape array_shape(const ArrayOptions& options, const char* call = "array_shape");

/// Checks `options` against a device's limits as CudaArray::create does (InvalidArgumentError).
void check_array_options(const ArrayOptions& options, const DeviceProperties& properties,
                         const char* call, unsigned mipmap_levels = 0);

/// A CUDA array on one device. Copies share it; it is destroyed when the last copy, texture,
/// surface or level view goes, after the work cudacore enqueued on it. Thread-safe.
class CudaArray : public OwningHandle<CudaArray, detail::ArrayBox, CUarray> {
public:
    /// A new array on `device`'s primary context, which it holds. InvalidArgumentError for options
    /// the device cannot do (naming the field and limit), DriverError, NoDriverError.
    static CudaArray create(const Device& device, const ArrayOptions& options);
    /// As create(device, options), in `context`, which the array holds.
    static CudaArray create(const Context& context, const ArrayOptions& options);

    /// The options it was made with (a level view: the level's sizes).
    const ArrayOptions& options() const noexcept;
    ArrayShape shape() const noexcept;  ///< its shape
    /// Bytes of one element (a 4x4 block when block-compressed); 0 for video formats.
    std::size_t element_size() const noexcept;
    int device_ordinal() const noexcept;  ///< the device's ordinal
    int mipmap_level() const noexcept;  ///< for a level view, its level; -1 for an array of its own
    /// "2D CUDA array float32x4 1024 x 768 (surface load/store) on device 0".
    std::string description() const;

    /// Ends the array for every holder; DriverError when the release fails (closed all the same).
    void close();
};

}  // namespace cudacore
