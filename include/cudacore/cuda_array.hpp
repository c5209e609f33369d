/// @file
/// CudaArray: a CUDA array (cuArray3DCreate), the opaque memory layout textures and surfaces read
/// and write; cuda.core's OpaqueArray.
///
///     CudaArray image = CudaArray::create(device, {.format = ArrayFormat::float32, .channels = 4,
///                                                  .width = 1024, .height = 768,
///                                                  .surface_load_store = true});
///
/// The shape follows CUDA_ARRAY3D_DESCRIPTOR: a 1D array has height and depth 0, a 2D array depth
/// 0, a 3D array all three. `layered` makes depth the number of layers (a 1D layered array has
/// height 0); `cubemap` needs width == height and depth 6 (6 x layers when also layered; the
/// faces are +x, -x, +y, -y, +z, -z). Every size and flag is checked against the device's limits
/// BEFORE the driver is called (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH and its kin, the
/// surface limits when `surface_load_store`, the gather limits when `texture_gather`): a
/// violation throws InvalidArgumentError naming the call, the field, the value and the limit by
/// its attribute name. Data moves in and out through array_copy.hpp.
///
/// Ownership: copies of a CudaArray share one array (copying is cheap); the array is destroyed
/// when the last copy, texture, surface or mipmap-level view holding it goes. A level view of a
/// MipmappedArray (MipmappedArray::level) holds its mipmapped array and never destroys the level
/// itself. Copies enqueued through cudacore are waited for before the array is destroyed, without
/// blocking the thread that dropped it (docs/design/release.md). Kernels reading the
/// array through a TextureObject or SurfaceObject passed to launch() are waited for the same way;
/// a kernel given the raw handle is the caller's to finish first. Release failures at exit are
/// ignored. A moved-from CudaArray may only be destroyed or assigned to.
///
/// Thread safety: a CudaArray may be used from several threads at once (it is never changed after
/// creation); the data in it follows stream order like any device memory.
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

/// Checks `options` against a device's limits (`properties`, as Device::properties() reads
/// them), as CudaArray::create does before calling the driver; `mipmap_levels` > 0 checks the
/// mipmapped limits and the level count too. Throws InvalidArgumentError naming `call`, the
/// field, the value and the limit (by its CU_DEVICE_ATTRIBUTE_ name). A limit the driver reports
/// as 0 (unknown to it) is not checked. Pure: thread-safe, no driver.
void check_array_options(const ArrayOptions& options, const DeviceProperties& properties,
                         const char* call, unsigned mipmap_levels = 0);

/// A CUDA array on one device, shared by its copies (see the file comment).
class CudaArray : public OwningHandle<CudaArray, detail::ArrayBox, CUarray> {
public:
    /// A new array on `device`'s primary context (cuArray3DCreate). Throws InvalidArgumentError
    /// for options the device cannot do (checked first, see check_array_options), DriverError
    /// naming cuArray3DCreate and the array (out of memory, a combination the driver refuses),
    /// NoDriverError without a driver. Holds the primary context. Thread-safe.
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
