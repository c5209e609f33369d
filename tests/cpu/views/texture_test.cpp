// CUDA arrays, textures and surfaces without a GPU: the formats, the shapes, every limit and
// option check made before the driver is called (against the limits of an H100 written out
// here), the copy arithmetic, and the public calls' refusals of bad combinations.
#include "device_accessible_host_resource.hpp"
#include "empty_stream.hpp"
#include "test_support.hpp"

#include "cudacore/array_copy.hpp"
#include "cudacore/array_format.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "cudacore/surface.hpp"
#include "cudacore/texture.hpp"
#include "support/box_access.hpp"
#include "views/array_box.hpp"
#include "views/array_copy_plan.hpp"
#include "views/texture_layout_checks.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudacore;

// The InvalidArgumentError's message; fails the test when something else (or nothing) ends the
// call: NoDriverError in particular would mean the driver was reached before the check.
std::string refusal(const std::function<void()>& call) {
    try {
        call();
    } catch (const InvalidArgumentError& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not an InvalidArgumentError: " << e.what();
        return "";
    }
    ADD_FAILURE() << "no error";
    return "";
}

#define EXPECT_MENTIONS(text, part) \
    EXPECT_NE(std::string(text).find(part), std::string::npos) << "no \"" << (part) << "\" in: " << (text)

// The texture and surface limits of an H100 (driver 580), as Device::properties() reports them.
DeviceProperties h100() {
    DeviceProperties p;
    p.texture_alignment = 512;
    p.texture_pitch_alignment = 32;
    p.maximum_texture1d_width = 131072;
    p.maximum_texture2d_width = 131072;
    p.maximum_texture2d_height = 65536;
    p.maximum_texture3d_width = 16384;
    p.maximum_texture3d_height = 16384;
    p.maximum_texture3d_depth = 16384;
    p.maximum_texture3d_width_alternate = 8192;
    p.maximum_texture3d_height_alternate = 8192;
    p.maximum_texture3d_depth_alternate = 32768;
    p.maximum_texture1d_layered_width = 32768;
    p.maximum_texture1d_layered_layers = 2048;
    p.maximum_texture2d_layered_width = 32768;
    p.maximum_texture2d_layered_height = 32768;
    p.maximum_texture2d_layered_layers = 2048;
    p.maximum_texture2d_gather_width = 32768;
    p.maximum_texture2d_gather_height = 32768;
    p.maximum_texturecubemap_width = 32768;
    p.maximum_texturecubemap_layered_width = 32768;
    p.maximum_texturecubemap_layered_layers = 2046;
    p.maximum_surface1d_width = 32768;
    p.maximum_surface2d_width = 131072;
    p.maximum_surface2d_height = 65536;
    p.maximum_surface3d_width = 16384;
    p.maximum_surface3d_height = 16384;
    p.maximum_surface3d_depth = 16384;
    p.maximum_surface1d_layered_width = 32768;
    p.maximum_surface1d_layered_layers = 2048;
    p.maximum_surface2d_layered_width = 32768;
    p.maximum_surface2d_layered_height = 32768;
    p.maximum_surface2d_layered_layers = 2048;
    p.maximum_surfacecubemap_width = 32768;
    p.maximum_surfacecubemap_layered_width = 32768;
    p.maximum_surfacecubemap_layered_layers = 2046;
    p.maximum_texture2d_linear_width = 131072;
    p.maximum_texture2d_linear_height = 65000;
    p.maximum_texture2d_linear_pitch = 2097120;
    p.maximum_texture2d_mipmapped_width = 32768;
    p.maximum_texture2d_mipmapped_height = 32768;
    p.maximum_texture1d_mipmapped_width = 32768;
    return p;
}

// ---- formats

TEST(ArrayFormat, EveryDriverFormatIsKnownByItsValue) {
    const CUarray_format driver_formats[] = {
        CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT32,
        CU_AD_FORMAT_SIGNED_INT8, CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_SIGNED_INT32,
        CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT, CU_AD_FORMAT_NV12,
        CU_AD_FORMAT_UNORM_INT8X1, CU_AD_FORMAT_UNORM_INT8X2, CU_AD_FORMAT_UNORM_INT8X4,
        CU_AD_FORMAT_UNORM_INT16X1, CU_AD_FORMAT_UNORM_INT16X2, CU_AD_FORMAT_UNORM_INT16X4,
        CU_AD_FORMAT_SNORM_INT8X1, CU_AD_FORMAT_SNORM_INT8X2, CU_AD_FORMAT_SNORM_INT8X4,
        CU_AD_FORMAT_SNORM_INT16X1, CU_AD_FORMAT_SNORM_INT16X2, CU_AD_FORMAT_SNORM_INT16X4,
        CU_AD_FORMAT_BC1_UNORM, CU_AD_FORMAT_BC1_UNORM_SRGB, CU_AD_FORMAT_BC2_UNORM,
        CU_AD_FORMAT_BC2_UNORM_SRGB, CU_AD_FORMAT_BC3_UNORM, CU_AD_FORMAT_BC3_UNORM_SRGB,
        CU_AD_FORMAT_BC4_UNORM, CU_AD_FORMAT_BC4_SNORM, CU_AD_FORMAT_BC5_UNORM,
        CU_AD_FORMAT_BC5_SNORM, CU_AD_FORMAT_BC6H_UF16, CU_AD_FORMAT_BC6H_SF16,
        CU_AD_FORMAT_BC7_UNORM, CU_AD_FORMAT_BC7_UNORM_SRGB, CU_AD_FORMAT_P010,
        CU_AD_FORMAT_P016, CU_AD_FORMAT_NV16, CU_AD_FORMAT_P210, CU_AD_FORMAT_P216,
        CU_AD_FORMAT_YUY2, CU_AD_FORMAT_Y210, CU_AD_FORMAT_Y216, CU_AD_FORMAT_AYUV,
        CU_AD_FORMAT_Y410, CU_AD_FORMAT_Y416, CU_AD_FORMAT_Y444_PLANAR8,
        CU_AD_FORMAT_Y444_PLANAR10, CU_AD_FORMAT_YUV444_8bit_SemiPlanar,
        CU_AD_FORMAT_YUV444_16bit_SemiPlanar, CU_AD_FORMAT_UNORM_INT_101010_2,
    };
    for (CUarray_format value : driver_formats) {
        const auto format = static_cast<ArrayFormat>(value);
        EXPECT_TRUE(is_known(format)) << "0x" << std::hex << value;
        EXPECT_EQ(to_string(format).find("ArrayFormat("), std::string::npos) << to_string(format);
    }
    EXPECT_EQ(static_cast<CUarray_format>(ArrayFormat::float32), CU_AD_FORMAT_FLOAT);
    EXPECT_EQ(static_cast<CUarray_format>(ArrayFormat::bc7_unorm_srgb), CU_AD_FORMAT_BC7_UNORM_SRGB);
    EXPECT_EQ(to_string(ArrayFormat::unorm_int8x4), "unorm_int8x4");
}

TEST(ArrayFormat, UnknownValuesAreNamedAndRefused) {
    const auto bogus = static_cast<ArrayFormat>(0x77);
    EXPECT_FALSE(is_known(bogus));
    EXPECT_EQ(to_string(bogus), "ArrayFormat(0x77)");
    EXPECT_MENTIONS(refusal([&] { format_info(bogus); }), "ArrayFormat(0x77)");
    EXPECT_MENTIONS(refusal([&] { element_size(bogus, 1); }), "ArrayFormat(0x77)");
}

TEST(ArrayFormat, ElementSizesAndChannels) {
    EXPECT_EQ(element_size(ArrayFormat::float32, 0), 4u);
    EXPECT_EQ(element_size(ArrayFormat::float32, 4), 16u);
    EXPECT_EQ(element_size(ArrayFormat::float16, 2), 4u);
    EXPECT_EQ(element_size(ArrayFormat::uint8, 4), 4u);
    EXPECT_EQ(element_size(ArrayFormat::int16, 1), 2u);
    EXPECT_EQ(element_size(ArrayFormat::unorm_int16x4, 0), 8u);
    EXPECT_EQ(element_size(ArrayFormat::unorm_int_101010_2, 4), 4u);
    EXPECT_EQ(element_size(ArrayFormat::bc1_unorm, 0), 8u);   // one 4x4 block
    EXPECT_EQ(element_size(ArrayFormat::bc7_unorm, 4), 16u);
    EXPECT_EQ(element_size(ArrayFormat::nv12, 3), 0u);        // video: no single element size
    EXPECT_EQ(resolve_channels(ArrayFormat::float32, 0, "x"), 1u);
    EXPECT_EQ(resolve_channels(ArrayFormat::snorm_int8x2, 0, "x"), 2u);
    EXPECT_EQ(resolve_channels(ArrayFormat::bc6h_uf16, 0, "x"), 3u);

    const std::string three = refusal([] { resolve_channels(ArrayFormat::float32, 3, "ArrayOptions::channels"); });
    EXPECT_MENTIONS(three, "ArrayOptions::channels is 3");
    EXPECT_MENTIONS(three, "1, 2 or 4");
    const std::string packed = refusal([] { resolve_channels(ArrayFormat::unorm_int8x4, 2, "c"); });
    EXPECT_MENTIONS(packed, "unorm_int8x4 has 4 channel(s)");
    EXPECT_MENTIONS(refusal([] { resolve_channels(ArrayFormat::nv12, 0, "c"); }), "video format nv12");
    EXPECT_TRUE(format_info(ArrayFormat::int32).is_integer);
    EXPECT_FALSE(format_info(ArrayFormat::float16).is_integer);
    EXPECT_EQ(format_info(ArrayFormat::bc4_snorm).kind, ArrayFormatKind::block_compressed);
}

// ---- shapes and device limits

TEST(ArrayShapes, FollowTheDescriptor) {
    EXPECT_EQ(array_shape({.width = 8}), ArrayShape::one_d);
    EXPECT_EQ(array_shape({.width = 8, .height = 4}), ArrayShape::two_d);
    EXPECT_EQ(array_shape({.width = 8, .height = 4, .depth = 2}), ArrayShape::three_d);
    EXPECT_EQ(array_shape({.width = 8, .depth = 3, .layered = true}), ArrayShape::one_d_layered);
    EXPECT_EQ(array_shape({.width = 8, .height = 4, .depth = 3, .layered = true}),
              ArrayShape::two_d_layered);
    EXPECT_EQ(array_shape({.width = 8, .height = 8, .depth = 6, .cubemap = true}), ArrayShape::cubemap);
    EXPECT_EQ(array_shape({.width = 8, .height = 8, .depth = 12, .layered = true, .cubemap = true}),
              ArrayShape::cubemap_layered);
    EXPECT_EQ(to_string(ArrayShape::cubemap_layered), "cubemap_layered");
    EXPECT_EQ(to_string(ArrayShape::two_d), "two_d");
    EXPECT_EQ(to_string(static_cast<ArrayShape>(42)), "ArrayShape(42)");
}

TEST(ArrayShapes, ImpossibleSizesAreRefusedNamingTheCall) {
    const std::string zero = refusal([] { array_shape({.width = 0, .height = 4}, "CudaArray::create"); });
    EXPECT_MENTIONS(zero, "CudaArray::create");
    EXPECT_MENTIONS(zero, "width is 0");
    EXPECT_MENTIONS(refusal([] { array_shape({.width = 8, .height = 4, .depth = 6, .cubemap = true}); }),
                    "width == height");
    EXPECT_MENTIONS(refusal([] { array_shape({.width = 8, .height = 8, .depth = 5, .cubemap = true}); }),
                    "depth 6");
    EXPECT_MENTIONS(refusal([] {
                        array_shape({.width = 8, .height = 8, .depth = 8, .layered = true, .cubemap = true});
                    }),
                    "multiple of 6");
    EXPECT_MENTIONS(refusal([] { array_shape({.width = 8, .height = 4, .layered = true}); }),
                    "layer count");
    EXPECT_MENTIONS(refusal([] { array_shape({.width = 8, .depth = 4}); }), "without a height");
}

TEST(ArrayLimits, ValidArraysOfEveryShapePass) {
    const DeviceProperties p = h100();
    EXPECT_NO_THROW(check_array_options({.width = 131072}, p, "c"));
    EXPECT_NO_THROW(check_array_options({.width = 131072, .height = 65536}, p, "c"));
    EXPECT_NO_THROW(check_array_options({.width = 16384, .height = 16384, .depth = 16384}, p, "c"));
    // Past the usual 3D depth, within the alternate limits.
    EXPECT_NO_THROW(check_array_options({.width = 8192, .height = 8192, .depth = 32768}, p, "c"));
    EXPECT_NO_THROW(check_array_options({.width = 64, .depth = 2048, .layered = true}, p, "c"));
    EXPECT_NO_THROW(check_array_options(
        {.width = 64, .height = 64, .depth = 2046 * 6, .layered = true, .cubemap = true}, p, "c"));
    EXPECT_NO_THROW(check_array_options({.format = ArrayFormat::uint8, .channels = 4, .width = 32768,
                                         .height = 32768, .texture_gather = true},
                                        p, "c"));
}

TEST(ArrayLimits, EachLimitIsNamedWithItsValue) {
    const DeviceProperties p = h100();
    struct Case {
        ArrayOptions options;
        unsigned levels;
        const char* attribute;
        const char* value;
    };
    const Case cases[] = {
        {{.width = 131073}, 0, "MAXIMUM_TEXTURE1D_WIDTH", "131073"},
        {{.width = 32769, .surface_load_store = true}, 0, "MAXIMUM_SURFACE1D_WIDTH", "32769"},
        {{.width = 64, .height = 65537}, 0, "MAXIMUM_TEXTURE2D_HEIGHT", "65537"},
        {{.width = 131073, .height = 4}, 0, "MAXIMUM_TEXTURE2D_WIDTH", "131073"},
        {{.width = 32769, .height = 4, .texture_gather = true}, 0, "MAXIMUM_TEXTURE2D_GATHER_WIDTH", "32769"},
        {{.width = 9000, .height = 9000, .depth = 16385}, 0, "MAXIMUM_TEXTURE3D_DEPTH", "16385"},
        {{.width = 64, .height = 64, .depth = 16385, .surface_load_store = true}, 0,
         "MAXIMUM_SURFACE3D_DEPTH", "16385"},
        {{.width = 64, .depth = 2049, .layered = true}, 0, "MAXIMUM_TEXTURE1D_LAYERED_LAYERS", "2049"},
        {{.width = 64, .height = 32769, .depth = 2, .layered = true}, 0,
         "MAXIMUM_TEXTURE2D_LAYERED_HEIGHT", "32769"},
        {{.width = 64, .height = 64, .depth = 2049, .layered = true, .surface_load_store = true}, 0,
         "MAXIMUM_TEXTURE2D_LAYERED_LAYERS", "2049"},
        {{.width = 32769, .height = 32769, .depth = 6, .cubemap = true}, 0,
         "MAXIMUM_TEXTURECUBEMAP_WIDTH", "32769"},
        {{.width = 8, .height = 8, .depth = 2047 * 6, .layered = true, .cubemap = true}, 0,
         "MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS", "2047"},
        {{.width = 32769, .height = 16}, 3, "MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH", "32769"},
        {{.width = 32769}, 3, "MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH", "32769"},
    };
    for (const Case& c : cases) {
        const std::string message =
            refusal([&] { check_array_options(c.options, p, "CudaArray::create", c.levels); });
        EXPECT_MENTIONS(message, "CudaArray::create");
        EXPECT_MENTIONS(message, std::string("CU_DEVICE_ATTRIBUTE_") + c.attribute);
        EXPECT_MENTIONS(message, c.value);
    }
}

TEST(ArrayLimits, ALimitTheDriverDoesNotReportIsNotChecked) {
    DeviceProperties p = h100();
    p.maximum_texture2d_width = 0;
    EXPECT_NO_THROW(check_array_options({.width = 1u << 30, .height = 4}, p, "c"));
}

TEST(ArrayLimits, BadCombinationsAreRefused) {
    const DeviceProperties p = h100();
    EXPECT_MENTIONS(refusal([&] {
                        check_array_options({.width = 8, .height = 8, .depth = 8, .texture_gather = true}, p, "c");
                    }),
                    "2D arrays only");
    EXPECT_MENTIONS(refusal([&] {
                        check_array_options({.format = ArrayFormat::bc1_unorm, .width = 8, .height = 8,
                                             .surface_load_store = true},
                                            p, "c");
                    }),
                    "block-compressed");
    EXPECT_MENTIONS(refusal([&] {
                        check_array_options({.format = ArrayFormat::float32, .channels = 3, .width = 8}, p, "c");
                    }),
                    "1, 2 or 4");
    EXPECT_MENTIONS(refusal([&] {
                        check_array_options({.format = static_cast<ArrayFormat>(0x77), .width = 8}, p, "c");
                    }),
                    "ArrayFormat(0x77)");
}

TEST(MipmapLevels, FullChainsCountDownToOne) {
    EXPECT_EQ(full_mipmap_levels({.width = 256, .height = 256}), 9u);
    EXPECT_EQ(full_mipmap_levels({.width = 300, .height = 1}), 9u);
    EXPECT_EQ(full_mipmap_levels({.width = 1}), 1u);
    EXPECT_EQ(full_mipmap_levels({.width = 4, .height = 4, .depth = 64}), 7u);
    // Layers are not halved: they do not count.
    EXPECT_EQ(full_mipmap_levels({.width = 16, .height = 16, .depth = 100, .layered = true}), 5u);
}

// ---- copies

TEST(ArrayCopyPlan, RegionsDefaultToTheWholeArrayAndStayInside) {
    const ArrayOptions image{.width = 64, .height = 32};
    const detail::ResolvedRegion whole =
        detail::resolve_region("copy_to_array", "destination", image, ArrayShape::two_d, {}, "the array");
    EXPECT_EQ(whole.width, 64u);
    EXPECT_EQ(whole.height, 32u);
    EXPECT_EQ(whole.depth, 1u);
    const detail::ResolvedRegion part = detail::resolve_region(
        "c", "source", image, ArrayShape::two_d, {.x = 8, .y = 4, .width = 16}, "the array");
    EXPECT_EQ(part.width, 16u);
    EXPECT_EQ(part.height, 28u);
    const ArrayOptions layers{.width = 16, .depth = 5, .layered = true};
    const detail::ResolvedRegion one_layer = detail::resolve_region(
        "c", "source", layers, ArrayShape::one_d_layered, {.z = 3, .depth = 2}, "a");
    EXPECT_EQ(one_layer.height, 1u);
    EXPECT_EQ(one_layer.depth, 2u);

    const std::string outside = refusal([&] {
        detail::resolve_region("copy_to_array", "destination", image, ArrayShape::two_d, {.y = 32},
                               "2D CUDA array float32 64 x 32");
    });
    EXPECT_MENTIONS(outside, "copy_to_array");
    EXPECT_MENTIONS(outside, "destination ArrayRegion::y 32");
    EXPECT_MENTIONS(outside, "2D CUDA array float32 64 x 32");
    EXPECT_MENTIONS(refusal([&] {
                        detail::resolve_region("c", "source", image, ArrayShape::two_d,
                                               {.x = 60, .width = 5}, "a");
                    }),
                    "runs past the end");
    EXPECT_MENTIONS(refusal([&] {
                        detail::resolve_region("c", "source", layers, ArrayShape::one_d_layered,
                                               {.z = 4, .depth = 2}, "a");
                    }),
                    "ArrayRegion::depth 2");
}

TEST(ArrayCopyPlan, PitchRowsAndSpan) {
    const detail::ResolvedRegion region{0, 0, 0, 64, 32, 4};
    const detail::LinearPlan packed = detail::plan_linear("c", region, 4, {}, 64 * 32 * 4 * 4, "m");
    EXPECT_EQ(packed.pitch, 256u);
    EXPECT_EQ(packed.rows, 32u);
    EXPECT_EQ(packed.span, 64u * 32 * 4 * 4);
    // 80-float rows, 40 rows a slice, from byte 16: the last byte is that of the last row.
    const detail::LinearPlan pitched =
        detail::plan_linear("c", region, 4, {.offset = 16, .pitch = 320, .rows = 40}, 1 << 20, "m");
    EXPECT_EQ(pitched.span, 16u + 320u * 40 * 3 + 320u * 31 + 256);
    EXPECT_NO_THROW(detail::plan_linear("c", region, 4, {.offset = 16, .pitch = 320, .rows = 40},
                                        pitched.span, "m"));

    EXPECT_MENTIONS(refusal([&] { detail::plan_linear("copy_from_array", region, 4, {.pitch = 252}, 1 << 20, "m"); }),
                    "LinearLayout::pitch 252");
    EXPECT_MENTIONS(refusal([&] { detail::plan_linear("c", region, 4, {.rows = 31}, 1 << 20, "m"); }),
                    "LinearLayout::rows 31");
    const std::string short_memory = refusal([&] {
        detail::plan_linear("copy_to_array", region, 4, {.offset = 16, .pitch = 320, .rows = 40},
                            pitched.span - 1, "host memory of 1 byte less");
    });
    EXPECT_MENTIONS(short_memory, "host memory of 1 byte less");
    EXPECT_MENTIONS(short_memory, std::to_string(pitched.span));
    EXPECT_MENTIONS(refusal([&] {
                        detail::plan_linear("c", region, 4, {.offset = SIZE_MAX - 4}, SIZE_MAX, "m");
                    }),
                    "past 2^64");
}

TEST(ArrayCopyPlan, FormatsWithoutAnElementSizeAreRefused) {
    EXPECT_EQ(detail::copy_element_size("c", {.format = ArrayFormat::float16, .channels = 4}, "a"), 8u);
    EXPECT_MENTIONS(refusal([] { detail::copy_element_size("copy_array", {.format = ArrayFormat::bc3_unorm}, "a"); }),
                    "block-compressed format bc3_unorm");
    EXPECT_MENTIONS(refusal([] { detail::copy_element_size("c", {.format = ArrayFormat::nv12, .channels = 3}, "a"); }),
                    "video format nv12");
    EXPECT_FALSE(detail::needs_3d_copy(ArrayShape::two_d));
    EXPECT_TRUE(detail::needs_3d_copy(ArrayShape::two_d_layered));
    EXPECT_TRUE(detail::needs_3d_copy(ArrayShape::cubemap));
}

// ---- textures

TEST(TextureOptionChecks, ValidSamplingPasses) {
    EXPECT_NO_THROW(check_texture_options({}, {.format = ArrayFormat::int32}, "c"));
    EXPECT_NO_THROW(check_texture_options(
        {.address_modes = {TextureAddressMode::wrap, TextureAddressMode::mirror, TextureAddressMode::border},
         .filter = TextureFilterMode::linear,
         .normalized_coordinates = true},
        {.format = ArrayFormat::float32}, "c"));
    EXPECT_NO_THROW(check_texture_options({.filter = TextureFilterMode::linear,
                                           .read_mode = TextureReadMode::normalized_float},
                                          {.format = ArrayFormat::uint8}, "c"));
    EXPECT_NO_THROW(check_texture_options({.filter = TextureFilterMode::linear},
                                          {.format = ArrayFormat::unorm_int8x4}, "c"));
    // Address modes and the filter mean nothing to linear memory.
    EXPECT_NO_THROW(check_texture_options({.address_modes = {TextureAddressMode::wrap}},
                                          {.format = ArrayFormat::float32, .linear = true}, "c"));
    // Address modes left out of a braced list are clamp, which unnormalized coordinates take.
    const TextureOptions border_x{.address_modes = {TextureAddressMode::border}};
    EXPECT_EQ(border_x.address_modes[1], TextureAddressMode::clamp);
    EXPECT_EQ(border_x.address_modes[2], TextureAddressMode::clamp);
    EXPECT_NO_THROW(check_texture_options(border_x, {.format = ArrayFormat::float32}, "c"));
    EXPECT_NO_THROW(check_texture_options({.normalized_coordinates = true, .max_mipmap_level_clamp = 8},
                                          {.format = ArrayFormat::float32, .mipmapped = true}, "c"));
}

TEST(TextureOptionChecks, EachBadOptionIsNamed) {
    struct Case {
        TextureOptions options;
        TextureSource source;
        const char* part;
    };
    const Case cases[] = {
        {{.address_modes = {TextureAddressMode::clamp, TextureAddressMode::wrap}}, {},
         "address_modes[1] (y) is wrap"},
        {{.address_modes = {TextureAddressMode::mirror}}, {}, "needs normalized_coordinates"},
        {{.address_modes = {static_cast<TextureAddressMode>(7)}}, {}, "not a TextureAddressMode (value 7)"},
        {{.filter = static_cast<TextureFilterMode>(2)}, {}, "TextureOptions::filter is not"},
        {{.read_mode = static_cast<TextureReadMode>(5)}, {}, "read_mode is not"},
        {{.filter = TextureFilterMode::linear}, {.format = ArrayFormat::uint16},
         "linear filtering needs floating point"},
        {{.filter = TextureFilterMode::linear, .read_mode = TextureReadMode::normalized_float},
         {.format = ArrayFormat::int32}, "32-bit integer"},
        {{.read_mode = TextureReadMode::normalized_float}, {.format = ArrayFormat::uint32},
         "never normalize"},
        {{.max_anisotropy = 17}, {}, "max_anisotropy is 17"},
        {{.min_mipmap_level_clamp = -1}, {}, "must not be negative"},
        {{.min_mipmap_level_clamp = 3, .max_mipmap_level_clamp = 2}, {}, "below min_mipmap_level_clamp"},
        {{.mipmap_level_bias = std::numeric_limits<float>::quiet_NaN()}, {}, "must be finite"},
        {{}, {.mipmapped = true}, "mipmapped array needs TextureOptions::normalized_coordinates"},
        {{.normalized_coordinates = true, .mipmap_filter = TextureFilterMode::linear},
         {.format = ArrayFormat::int8, .mipmapped = true}, "mipmap_filter is linear"},
        {{.seamless_cubemap = true}, {.format = ArrayFormat::float32}, "not over a cubemap"},
        {{}, {.format = static_cast<ArrayFormat>(0x77)}, "ArrayFormat(0x77)"},
    };
    for (const Case& c : cases) {
        const std::string message =
            refusal([&] { check_texture_options(c.options, c.source, "TextureObject::from_array"); });
        EXPECT_MENTIONS(message, "TextureObject::from_array");
        EXPECT_MENTIONS(message, c.part);
    }
}

TEST(TextureLayoutChecks, LinearMemory) {
    const DeviceProperties p = h100();
    EXPECT_EQ(detail::check_linear_layout("c", {}, 0x10000, 4096, 4, p, 1 << 27, "b"), 1024u);
    EXPECT_EQ(detail::check_linear_layout("c", {.width = 100}, 0x10000, 4096, 4, p, 1 << 27, "b"), 100u);
    const std::string misaligned = refusal([&] {
        detail::check_linear_layout("TextureObject::from_linear", {}, 0x10004, 4096, 4, p, 0,
                                    "device buffer at 0x10004");
    });
    EXPECT_MENTIONS(misaligned, "TextureObject::from_linear");
    EXPECT_MENTIONS(misaligned, "device buffer at 0x10004");
    EXPECT_MENTIONS(misaligned, "CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT");
    EXPECT_MENTIONS(misaligned, "512");
    EXPECT_MENTIONS(refusal([&] { detail::check_linear_layout("c", {.width = 1025}, 0x10000, 4096, 4, p, 0, "b"); }),
                    "runs past the end");
    EXPECT_MENTIONS(refusal([&] { detail::check_linear_layout("c", {}, 0x10000, 4096, 4, p, 1000, "b"); }),
                    "cuDeviceGetTexture1DLinearMaxWidth");
    EXPECT_MENTIONS(refusal([&] { detail::check_linear_layout("c", {}, 0x10000, 3, 4, p, 0, "b"); }),
                    "no whole element");
    unsigned channels = 0;
    EXPECT_EQ(detail::linear_element_size("c", ArrayFormat::float32, 2, channels), 8u);
    EXPECT_EQ(channels, 2u);
    EXPECT_MENTIONS(refusal([&] { detail::linear_element_size("c", ArrayFormat::bc1_unorm, 0, channels); }),
                    "use a CudaArray");
}

TEST(TextureLayoutChecks, PitchedMemory) {
    const DeviceProperties p = h100();
    const Pitch2DTextureLayout good{.format = ArrayFormat::float32, .width = 64, .height = 32, .pitch = 512};
    EXPECT_NO_THROW(detail::check_pitch2d_layout("c", good, 0x10000, 512 * 31 + 256, 4, p, "b"));
    struct Case {
        Pitch2DTextureLayout layout;
        std::uintptr_t address;
        std::size_t bytes;
        const char* part;
    };
    const Case cases[] = {
        {{.width = 64, .height = 32, .pitch = 520}, 0x10000, 1 << 20, "TEXTURE_PITCH_ALIGNMENT"},
        {{.width = 64, .height = 32, .pitch = 224}, 0x10000, 1 << 20, "less than a row"},
        {{.width = 64, .height = 32, .pitch = 512}, 0x10020, 1 << 20, "CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT"},
        {{.width = 64, .height = 32, .pitch = 512}, 0x10000, 512 * 31 + 255, "run past the end"},
        {{.width = 131073, .height = 2, .pitch = 1 << 20}, 0x10000, 1 << 22, "MAXIMUM_TEXTURE2D_LINEAR_WIDTH"},
        {{.width = 4, .height = 65001, .pitch = 32}, 0x10000, 1 << 22, "MAXIMUM_TEXTURE2D_LINEAR_HEIGHT"},
        {{.width = 4, .height = 2, .pitch = 2097152}, 0x10000, 1 << 23, "MAXIMUM_TEXTURE2D_LINEAR_PITCH"},
        {{.width = 0, .height = 2, .pitch = 32}, 0x10000, 1 << 20, "at least 1"},
    };
    for (const Case& c : cases)
        EXPECT_MENTIONS(refusal([&] {
                            detail::check_pitch2d_layout("TextureObject::from_pitch2d", c.layout, c.address,
                                                         c.bytes, 4, p, "b");
                        }),
                        c.part);
}

// ---- the public calls: refused before the driver

// A CudaArray box with no driver object behind it (context null: its release destroys nothing).
CudaArray fake_array(const ArrayOptions& options) {
    auto box = std::make_shared<detail::ArrayBox>();
    box->handle = reinterpret_cast<CUarray>(std::uintptr_t{0x1000});
    box->options = options;
    box->options.channels = resolve_channels(options.format, options.channels, "fake");
    box->shape = array_shape(options);
    box->element_size = element_size(options.format, box->options.channels);
    return detail::BoxAccess::make<CudaArray>(std::move(box));
}

TEST(TextureCalls, KernelArgumentsAreTheSixtyFourBitHandles) {
    static_assert(std::is_same_v<detail::converted_argument_t<TextureObject>, CUtexObject>);
    static_assert(std::is_same_v<detail::converted_argument_t<SurfaceObject>, CUsurfObject>);
    static_assert(sizeof(CUtexObject) == 8 && sizeof(CUsurfObject) == 8);
    static_assert(detail::noted_kernel_argument<TextureObject>);
    static_assert(detail::noted_kernel_argument<SurfaceObject>);
    static_assert(!detail::noted_kernel_argument<Buffer>);
}

TEST(TextureCalls, ArraysDescribeThemselves) {
    const CudaArray image = fake_array({.format = ArrayFormat::float32, .channels = 4, .width = 64,
                                        .height = 32, .surface_load_store = true});
    EXPECT_EQ(image.shape(), ArrayShape::two_d);
    EXPECT_EQ(image.element_size(), 16u);
    EXPECT_EQ(image.mipmap_level(), -1);
    EXPECT_MENTIONS(image.description(), "2D CUDA array float32x4 64 x 32 (surface load/store)");
    const CudaArray cube = fake_array({.width = 8, .height = 8, .depth = 12, .layered = true, .cubemap = true});
    EXPECT_MENTIONS(cube.description(), "cubemap layered CUDA array float32 8 x 8, 12 layers");
}

TEST(TextureCalls, SurfaceNeedsTheSurfaceFlag) {
    const CudaArray plain = fake_array({.width = 64, .height = 32});
    const std::string message = refusal([&] { SurfaceObject::from_array(plain); });
    EXPECT_MENTIONS(message, "SurfaceObject::from_array");
    EXPECT_MENTIONS(message, "2D CUDA array float32 64 x 32");
    EXPECT_MENTIONS(message, "surface_load_store");
}

TEST(TextureCalls, TextureOptionsAreCheckedBeforeTheDriver) {
    const CudaArray ints = fake_array({.format = ArrayFormat::int32, .width = 64, .height = 32});
    EXPECT_MENTIONS(refusal([&] { TextureObject::from_array(ints, {.filter = TextureFilterMode::linear}); }),
                    "TextureObject::from_array");
    const CudaArray plain = fake_array({.width = 64, .height = 32});
    EXPECT_MENTIONS(refusal([&] { TextureObject::from_array(plain, {.seamless_cubemap = true}); }),
                    "not over a cubemap");

    auto resource = std::make_shared<test::DeviceAccessibleHostResource>();
    Stream none = test::no_stream();
    Buffer buffer = resource->allocate(4096, none);
    EXPECT_MENTIONS(refusal([&] {
                        TextureObject::from_linear(buffer, {.format = ArrayFormat::bc1_unorm});
                    }),
                    "TextureObject::from_linear");
    EXPECT_MENTIONS(refusal([&] {
                        TextureObject::from_pitch2d(buffer, {.width = 8, .height = 8, .pitch = 32},
                                                    {.address_modes = {TextureAddressMode::wrap}});
                    }),
                    "needs normalized_coordinates");
    Buffer closed = resource->allocate(4096, none);
    closed.close(none);
    EXPECT_MENTIONS(refusal([&] { TextureObject::from_linear(closed, {}); }), "closed");
}

TEST(TextureCalls, CopiesAreCheckedBeforeTheDriver) {
    const CudaArray image = fake_array({.width = 64, .height = 32});
    std::vector<float> host(64 * 32);
    const Stream none = test::no_stream();
    const std::string too_small = refusal([&] {
        copy_to_array(image, host.data(), host.size() * sizeof(float) - 4, none);
    });
    EXPECT_MENTIONS(too_small, "copy_to_array");
    EXPECT_MENTIONS(too_small, "2D CUDA array float32 64 x 32");
    EXPECT_MENTIONS(refusal([&] { copy_from_array(host.data(), 8192, image, none, {}, {.x = 64}); }),
                    "source ArrayRegion::x 64");
    EXPECT_MENTIONS(refusal([&] { copy_to_array(image, nullptr, 8192, none); }), "null host pointer");
    const CudaArray halves = fake_array({.format = ArrayFormat::float16, .width = 64, .height = 32});
    EXPECT_MENTIONS(refusal([&] { copy_between_arrays(halves, image, none); }), "elements differ in size");
    const CudaArray other = fake_array({.width = 64, .height = 32});
    EXPECT_MENTIONS(refusal([&] { copy_between_arrays(other, image, none, {.width = 9}, {.width = 8}); }),
                    "extents differ");
    // A valid copy reaches the stream check: the empty stream is refused, naming the call.
    const std::string empty = refusal([&] {
        copy_to_array(image, host.data(), host.size() * sizeof(float), none);
    });
    EXPECT_MENTIONS(empty, "copy_to_array");
    EXPECT_MENTIONS(empty, "Stream is empty");
}

// The stream-first forms, deprecated for one release, still compile and forward to the new ones
// with every operand in its place: each refusal below names the side (source or destination) and
// the value that only the right operand could have given.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(TextureCalls, DeprecatedSourceFirstCopiesForwardToTheNewForms) {
    const CudaArray image = fake_array({.width = 64, .height = 32});
    const CudaArray halves = fake_array({.format = ArrayFormat::float16, .width = 64, .height = 32});
    std::vector<float> host(64 * 32);
    const Stream none = test::no_stream();
    auto resource = std::make_shared<test::DeviceAccessibleHostResource>();
    const Buffer small = resource->allocate(64, none);

    const std::string from_host = refusal([&] { copy_from_array(image, host.data(), 8192, none, {}, {.x = 64}); });
    EXPECT_MENTIONS(from_host, "copy_from_array");
    EXPECT_MENTIONS(from_host, "source ArrayRegion::x 64");
    const std::string from_buffer = refusal([&] { copy_from_array(image, small, none); });
    EXPECT_MENTIONS(from_buffer, "copy_from_array");
    EXPECT_MENTIONS(from_buffer, "holds only 64 bytes");
    const std::string arrays = refusal([&] { copy_array(image, halves, none); });
    EXPECT_MENTIONS(arrays, "copy_between_arrays");
    EXPECT_LT(arrays.find("4 bytes in"), arrays.find("2 bytes in")) << arrays;  // image is the source
    const CudaArray other = fake_array({.width = 64, .height = 32});
    // The regions keep their meaning: the source region first in the old form.
    EXPECT_MENTIONS(refusal([&] { copy_array(image, other, none, {.width = 8}, {.width = 9}); }), "extents differ");
    // A valid copy reaches the stream: the stream went where the new form takes it.
    const std::string empty = refusal([&] { copy_from_array(image, host.data(), 8192, none); });
    EXPECT_MENTIONS(empty, "Stream is empty");
}
#pragma GCC diagnostic pop

}  // namespace
