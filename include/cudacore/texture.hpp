/// @file
/// TextureObject: a texture object over a CUDA array, a mipmapped array, or linear or pitched 2D
/// device memory (cuda.core's TextureObject). Guide: docs/memory.md.
///
///     TextureObject tex = TextureObject::from_array(image, {
///         .address_modes = {TextureAddressMode::clamp, TextureAddressMode::clamp},
///         .filter = TextureFilterMode::linear,
///         .normalized_coordinates = true});
///     launch(stream, config, kernel, tex, out);  // __global__ void k(cudaTextureObject_t t, ...)
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/array_format.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/mipmapped_array.hpp"

#include <cuda.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>

namespace cudacore {

/// How coordinates outside [0, size) are read; clamp first, so modes left out are clamp.
enum class TextureAddressMode {
    clamp,   ///< the edge element
    wrap,    ///< repeat (normalized coordinates only)
    mirror,  ///< repeat mirrored (normalized coordinates only)
    border,  ///< TextureOptions::border_color
};

/// "clamp", "wrap", "mirror", "border"; "TextureAddressMode(N)" outside the enumeration.
std::string to_string(TextureAddressMode mode);
/// How a fetch between elements is computed (CUfilter_mode).
enum class TextureFilterMode {
    point,   ///< the nearest element
    linear,  ///< linear (bi-, trilinear) interpolation of the neighbours
};

/// "point", "linear"; "TextureFilterMode(N)" outside the enumeration.
std::string to_string(TextureFilterMode mode);
/// What a fetch of integer data returns.
enum class TextureReadMode {
    element_type,      ///< the stored value (CU_TRSF_READ_AS_INTEGER)
    normalized_float,  ///< 8/16-bit integers as floats in [0, 1] ([-1, 1] when signed)
};

/// "element_type", "normalized_float"; "TextureReadMode(N)" outside the enumeration.
std::string to_string(TextureReadMode mode);

/// The sampling of a texture; defaults: clamp, point, element type, unnormalized coordinates.
struct TextureOptions {
    /// Per dimension (x, y, z); ignored for linear memory.
    std::array<TextureAddressMode, 3> address_modes = {
        TextureAddressMode::clamp, TextureAddressMode::clamp, TextureAddressMode::clamp};
    TextureFilterMode filter = TextureFilterMode::point;  ///< ignored for linear memory
    TextureReadMode read_mode = TextureReadMode::element_type;  ///< what integer fetches return
    bool normalized_coordinates = false;  ///< [0, 1) spans each dimension (CU_TRSF_NORMALIZED_COORDINATES)
    std::array<float, 4> border_color = {0, 0, 0, 0};  ///< read outside with border address mode
    bool srgb = false;                     ///< sRGB to linear conversion on reads (CU_TRSF_SRGB)
    unsigned max_anisotropy = 0;           ///< 0 to 16 (the driver clamps 0 up to 1)
    TextureFilterMode mipmap_filter = TextureFilterMode::point;  ///< between mipmap levels
    float mipmap_level_bias = 0;           ///< added to the computed level
    float min_mipmap_level_clamp = 0;      ///< lowest level read
    float max_mipmap_level_clamp = 0;      ///< highest level read
    bool disable_trilinear_optimization = false;  ///< CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION
    bool seamless_cubemap = false;         ///< CU_TRSF_SEAMLESS_CUBEMAP (cubemaps only)
};

/// Linear device memory read as a 1D texture of `width` elements.
struct LinearTextureLayout {
    ArrayFormat format = ArrayFormat::float32;  ///< plain or packed formats
    unsigned channels = 0;  ///< as ArrayOptions::channels
    std::size_t width = 0;  ///< elements; 0: as many as the buffer holds whole
};

/// Pitched 2D device memory read as a 2D texture.
struct Pitch2DTextureLayout {
    ArrayFormat format = ArrayFormat::float32;  ///< plain or packed formats
    unsigned channels = 0;    ///< as ArrayOptions::channels
    std::size_t width = 0;    ///< elements per row
    std::size_t height = 0;   ///< rows
    std::size_t pitch = 0;    ///< bytes from one row to the next (aligned to TEXTURE_PITCH_ALIGNMENT)
};

/// What a texture reads, for the checks that need no driver.
struct TextureSource {
    ArrayFormat format = ArrayFormat::float32;  ///< its element format
    bool cubemap = false;                       ///< a cubemap (layered or not)
    bool mipmapped = false;                     ///< a mipmapped array
    bool linear = false;                        ///< linear memory (address modes and filter ignored)
};

/// Checks `options` as the factories do. InvalidArgumentError naming `call`. No driver.
void check_texture_options(const TextureOptions& options, const TextureSource& source,
                           const char* call);

/// A texture object over an array or device memory, destroyed after the work launched with it.
/// Immutable, thread-safe. The factories throw InvalidArgumentError naming the field for options
/// the hardware does not do (before the driver), DriverError, NoDriverError.
class TextureObject : public OwningHandle<TextureObject, detail::TextureBox, CUtexObject> {
public:
    /// A texture reading `array` (any shape; a level view reads that level). Holds the array.
    static TextureObject from_array(const CudaArray& array, const TextureOptions& options = {});
    /// A texture reading every level of `array`; needs normalized_coordinates. Holds the array.
    static TextureObject from_mipmapped_array(const MipmappedArray& array,
                                              const TextureOptions& options);
    /// A 1D texture over linear device memory (tex1Dfetch). Holds the buffer.
    static TextureObject from_linear(const Buffer& buffer, const LinearTextureLayout& layout,
                                     const TextureOptions& options = {});
    /// A 2D texture over pitched device memory. Holds the buffer.
    static TextureObject from_pitch2d(const Buffer& buffer, const Pitch2DTextureLayout& layout,
                                      const TextureOptions& options = {});

    /// The options it was made with.
    const TextureOptions& options() const noexcept;
    /// The device's ordinal.
    int device_ordinal() const noexcept;
    /// "texture object 1 over 2D CUDA array float32 64 x 64 on device 0".
    std::string description() const;

    /// Notes a launch with this texture on `stream`, so its release waits for it (launch() does).
    void note_launch(const Stream& stream) const;

    /// Ends it for every holder. DriverError (closed all the same).
    void close();
};

}  // namespace cudacore
