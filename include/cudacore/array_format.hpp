/// @file
/// ArrayFormat: the element formats of CUDA arrays and textures (every CUarray_format, by the same
/// value), with their channel counts and element sizes. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace cudacore {

/// A CUarray_format, by the same value.
enum class ArrayFormat : unsigned {
    uint8 = 0x01,    ///< CU_AD_FORMAT_UNSIGNED_INT8
    uint16 = 0x02,   ///< CU_AD_FORMAT_UNSIGNED_INT16
    uint32 = 0x03,   ///< CU_AD_FORMAT_UNSIGNED_INT32
    int8 = 0x08,     ///< CU_AD_FORMAT_SIGNED_INT8
    int16 = 0x09,    ///< CU_AD_FORMAT_SIGNED_INT16
    int32 = 0x0a,    ///< CU_AD_FORMAT_SIGNED_INT32
    float16 = 0x10,  ///< CU_AD_FORMAT_HALF
    float32 = 0x20,  ///< CU_AD_FORMAT_FLOAT
    unorm_int8x1 = 0xc0,   ///< CU_AD_FORMAT_UNORM_INT8X1
    unorm_int8x2 = 0xc1,   ///< CU_AD_FORMAT_UNORM_INT8X2
    unorm_int8x4 = 0xc2,   ///< CU_AD_FORMAT_UNORM_INT8X4
    unorm_int16x1 = 0xc3,  ///< CU_AD_FORMAT_UNORM_INT16X1
    unorm_int16x2 = 0xc4,  ///< CU_AD_FORMAT_UNORM_INT16X2
    unorm_int16x4 = 0xc5,  ///< CU_AD_FORMAT_UNORM_INT16X4
    snorm_int8x1 = 0xc6,   ///< CU_AD_FORMAT_SNORM_INT8X1
    snorm_int8x2 = 0xc7,   ///< CU_AD_FORMAT_SNORM_INT8X2
    snorm_int8x4 = 0xc8,   ///< CU_AD_FORMAT_SNORM_INT8X4
    snorm_int16x1 = 0xc9,  ///< CU_AD_FORMAT_SNORM_INT16X1
    snorm_int16x2 = 0xca,  ///< CU_AD_FORMAT_SNORM_INT16X2
    snorm_int16x4 = 0xcb,  ///< CU_AD_FORMAT_SNORM_INT16X4
    unorm_int_101010_2 = 0x50,  ///< CU_AD_FORMAT_UNORM_INT_101010_2 (4 channels in 32 bits)
    bc1_unorm = 0x91,       ///< CU_AD_FORMAT_BC1_UNORM
    bc1_unorm_srgb = 0x92,  ///< CU_AD_FORMAT_BC1_UNORM_SRGB
    bc2_unorm = 0x93,       ///< CU_AD_FORMAT_BC2_UNORM
    bc2_unorm_srgb = 0x94,  ///< CU_AD_FORMAT_BC2_UNORM_SRGB
    bc3_unorm = 0x95,       ///< CU_AD_FORMAT_BC3_UNORM
    bc3_unorm_srgb = 0x96,  ///< CU_AD_FORMAT_BC3_UNORM_SRGB
    bc4_unorm = 0x97,       ///< CU_AD_FORMAT_BC4_UNORM
    bc4_snorm = 0x98,       ///< CU_AD_FORMAT_BC4_SNORM
    bc5_unorm = 0x99,       ///< CU_AD_FORMAT_BC5_UNORM
    bc5_snorm = 0x9a,       ///< CU_AD_FORMAT_BC5_SNORM
    bc6h_uf16 = 0x9b,       ///< CU_AD_FORMAT_BC6H_UF16
    bc6h_sf16 = 0x9c,       ///< CU_AD_FORMAT_BC6H_SF16
    bc7_unorm = 0x9d,       ///< CU_AD_FORMAT_BC7_UNORM
    bc7_unorm_srgb = 0x9e,  ///< CU_AD_FORMAT_BC7_UNORM_SRGB
    nv12 = 0xb0,            ///< CU_AD_FORMAT_NV12 (video)
    p010 = 0x9f,            ///< CU_AD_FORMAT_P010 (video)
    p016 = 0xa1,            ///< CU_AD_FORMAT_P016 (video)
    nv16 = 0xa2,            ///< CU_AD_FORMAT_NV16 (video)
    p210 = 0xa3,            ///< CU_AD_FORMAT_P210 (video)
    p216 = 0xa4,            ///< CU_AD_FORMAT_P216 (video)
    yuy2 = 0xa5,            ///< CU_AD_FORMAT_YUY2 (video)
    y210 = 0xa6,            ///< CU_AD_FORMAT_Y210 (video)
    y216 = 0xa7,            ///< CU_AD_FORMAT_Y216 (video)
    ayuv = 0xa8,            ///< CU_AD_FORMAT_AYUV (video)
    y410 = 0xa9,            ///< CU_AD_FORMAT_Y410 (video)
    y416 = 0xb1,            ///< CU_AD_FORMAT_Y416 (video)
    y444_planar8 = 0xb2,    ///< CU_AD_FORMAT_Y444_PLANAR8 (video)
    y444_planar10 = 0xb3,   ///< CU_AD_FORMAT_Y444_PLANAR10 (video)
    yuv444_8bit_semiplanar = 0xb4,   ///< CU_AD_FORMAT_YUV444_8bit_SemiPlanar (video)
    yuv444_16bit_semiplanar = 0xb5,  ///< CU_AD_FORMAT_YUV444_16bit_SemiPlanar (video)
};

/// What kind of format it is.
enum class ArrayFormatKind {
    plain,             ///< one component type, 1, 2 or 4 channels chosen by the caller
    packed,            ///< a fixed channel count packed in one element
    block_compressed,  ///< BC1 to BC7: one element is a 4x4 block of texels
    video,             ///< YUV formats: planes without a single element size
};

/// "plain", "packed", "block_compressed", "video"; "ArrayFormatKind(N)" for other values.
std::string to_string(ArrayFormatKind kind);

/// Facts about one format. Never throws.
struct ArrayFormatInfo {
    const char* name = "";  ///< "float32", "bc1_unorm", ...
    ArrayFormatKind kind = ArrayFormatKind::plain;  ///< plain, packed, block-compressed or video
    /// Bytes of one component (plain), element (packed) or 4x4 block; 0 for video formats.
    unsigned bytes = 0;
    /// The channels an element has; 0 where the caller chooses (plain, video).
    unsigned channels = 0;
    bool is_integer = false;  ///< plain 8/16/32-bit integers (texture reads may normalize them)
    bool is_signed = false;   ///< signed components
};

bool is_known(ArrayFormat format) noexcept;  ///< true for a value of the enumeration
/// The facts about `format`; InvalidArgumentError for a value outside the enumeration.
const ArrayFormatInfo& format_info(ArrayFormat format);

/// "float32", ...; "ArrayFormat(0xNN)" for other values.
std::string to_string(ArrayFormat format);
/// The channel count an array of `format` gets from a requested `channels` (0: the format's own);
/// InvalidArgumentError naming `what` when the format takes no such count.
unsigned resolve_channels(ArrayFormat format, unsigned channels, const std::string& what);
/// Bytes of one element of `channels` channels (a 4x4 block when block-compressed; 0 for video).
std::size_t element_size(ArrayFormat format, unsigned channels);

}  // namespace cudacore
