/// @file
/// CudaArray: a CUDA array (cuArray3DCreate), the opaque layout textures and surfaces read and
/// write (cuda.core's OpaqueArray). Shapes as CUDA_ARRAY3D_DESCRIPTOR (1D: height and depth 0;
/// layered: depth counts layers; cubemap: depth 6). Every size and flag is checked against the
/// device's limits first (InvalidArgumentError naming the field and the limit's attribute).
/// Copies share one array, destroyed when the last copy, texture, surface or level view goes,
/// after the copies and launches cudacore enqueued on it. Usable from several threads. Data moves
/// through array_copy.hpp; guide: docs/memory.md.
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
    /// Channels per element: plain formats 1, 2 or 4 (0 means 1); packed and block-compressed
    /// formats 0 or their own count; video formats the count the driver documents.
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
/// "one_d", "two_d", "three_d", "one_d_layered", "two_d_layered", "cubemap", "cubemap_layered";
/// "ArrayShape(N)" for a value outside the enumeration. Never throws beyond std::bad_alloc. (An
/// array's description says "2D layered CUDA array ...".)
std::string to_string(ArrayShape shape);

/// The shape `options` describe. Throws InvalidArgumentError naming `call` for sizes that fit no
/// shape (zero width, a depth without a height, a cubemap that is not square or whose depth is
/// not a multiple of 6, a layered array without layers).
ArrayShape array_shape(const ArrayOptions& options, const char* call = "array_shape");

/// Checks `options` against a device's limits as CudaArray::create does (mipmapped ones when
/// `mipmap_levels` > 0; a limit reported as 0 is not checked). Throws InvalidArgumentError naming
/// `call`, the field, the value and the limit. Pure: thread-safe, no driver.
void check_array_options(const ArrayOptions& options, const DeviceProperties& properties,
                         const char* call, unsigned mipmap_levels = 0);

/// A CUDA array on one device, shared by its copies (see the file comment).
class CudaArray : public OwningHandle<CudaArray, detail::ArrayBox, CUarray> {
public:
    /// A new array on `device`'s primary context (cuArray3DCreate), which it holds. Throws
    /// InvalidArgumentError for options the device cannot do, DriverError naming the call,
    /// NoDriverError. Thread-safe.
    static CudaArray create(const Device& device, const ArrayOptions& options);
    /// As create(device, options), in `context` (a created or wrapped context as well as a
    /// primary one), which the array holds; textures and surfaces made over it live there too.
    /// InvalidArgumentError for a closed Context, as well.
    static CudaArray create(const Context& context, const ArrayOptions& options);

    /// The options it was made with (a level view: the level's sizes, channels resolved).
    const ArrayOptions& options() const noexcept;
    /// Its shape.
    ArrayShape shape() const noexcept;
    /// Bytes of one element (4x4 block for block-compressed formats); 0 for video formats.
    std::size_t element_size() const noexcept;
    /// The device's ordinal.
    int device_ordinal() const noexcept;
    /// For a level view, its level; -1 for an array of its own.
    int mipmap_level() const noexcept;
    /// "2D CUDA array float32x4 1024 x 768 (surface load/store) on device 0"; never throws beyond
    /// std::bad_alloc.
    std::string description() const;

    /// Ends the array for every holder, copies included (docs/errors-and-lifetime.md,
    /// "Closing and resetting"). DriverError when the release it makes fails (closed all the same).
    void close();
};

}  // namespace cudacore
