#include "cudacore/array_format.hpp"

#include "cudacore/errors.hpp"
#include "support/enum_text.hpp"

#include <cstdio>

namespace cudacore {

namespace {

struct Entry {
    ArrayFormat format;
    ArrayFormatInfo info;
};

using K = ArrayFormatKind;

// name, kind, bytes, channels, integer, signed
constexpr Entry entries[] = {
    {ArrayFormat::uint8, {"uint8", K::plain, 1, 0, true, false}},
    {ArrayFormat::uint16, {"uint16", K::plain, 2, 0, true, false}},
    {ArrayFormat::uint32, {"uint32", K::plain, 4, 0, true, false}},
    {ArrayFormat::int8, {"int8", K::plain, 1, 0, true, true}},
    {ArrayFormat::int16, {"int16", K::plain, 2, 0, true, true}},
    {ArrayFormat::int32, {"int32", K::plain, 4, 0, true, true}},
    {ArrayFormat::float16, {"float16", K::plain, 2, 0, false, true}},
    {ArrayFormat::float32, {"float32", K::plain, 4, 0, false, true}},
    {ArrayFormat::unorm_int8x1, {"unorm_int8x1", K::packed, 1, 1, false, false}},
    {ArrayFormat::unorm_int8x2, {"unorm_int8x2", K::packed, 2, 2, false, false}},
    {ArrayFormat::unorm_int8x4, {"unorm_int8x4", K::packed, 4, 4, false, false}},
    {ArrayFormat::unorm_int16x1, {"unorm_int16x1", K::packed, 2, 1, false, false}},
    {ArrayFormat::unorm_int16x2, {"unorm_int16x2", K::packed, 4, 2, false, false}},
    {ArrayFormat::unorm_int16x4, {"unorm_int16x4", K::packed, 8, 4, false, false}},
    {ArrayFormat::snorm_int8x1, {"snorm_int8x1", K::packed, 1, 1, false, true}},
    {ArrayFormat::snorm_int8x2, {"snorm_int8x2", K::packed, 2, 2, false, true}},
    {ArrayFormat::snorm_int8x4, {"snorm_int8x4", K::packed, 4, 4, false, true}},
    {ArrayFormat::snorm_int16x1, {"snorm_int16x1", K::packed, 2, 1, false, true}},
    {ArrayFormat::snorm_int16x2, {"snorm_int16x2", K::packed, 4, 2, false, true}},
    {ArrayFormat::snorm_int16x4, {"snorm_int16x4", K::packed, 8, 4, false, true}},
    {ArrayFormat::unorm_int_101010_2, {"unorm_int_101010_2", K::packed, 4, 4, false, false}},
    {ArrayFormat::bc1_unorm, {"bc1_unorm", K::block_compressed, 8, 4, false, false}},
    {ArrayFormat::bc1_unorm_srgb, {"bc1_unorm_srgb", K::block_compressed, 8, 4, false, false}},
    {ArrayFormat::bc2_unorm, {"bc2_unorm", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::bc2_unorm_srgb, {"bc2_unorm_srgb", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::bc3_unorm, {"bc3_unorm", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::bc3_unorm_srgb, {"bc3_unorm_srgb", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::bc4_unorm, {"bc4_unorm", K::block_compressed, 8, 1, false, false}},
    {ArrayFormat::bc4_snorm, {"bc4_snorm", K::block_compressed, 8, 1, false, true}},
    {ArrayFormat::bc5_unorm, {"bc5_unorm", K::block_compressed, 16, 2, false, false}},
    {ArrayFormat::bc5_snorm, {"bc5_snorm", K::block_compressed, 16, 2, false, true}},
    {ArrayFormat::bc6h_uf16, {"bc6h_uf16", K::block_compressed, 16, 3, false, false}},
    {ArrayFormat::bc6h_sf16, {"bc6h_sf16", K::block_compressed, 16, 3, false, true}},
    {ArrayFormat::bc7_unorm, {"bc7_unorm", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::bc7_unorm_srgb, {"bc7_unorm_srgb", K::block_compressed, 16, 4, false, false}},
    {ArrayFormat::nv12, {"nv12", K::video, 0, 0, false, false}},
    {ArrayFormat::p010, {"p010", K::video, 0, 0, false, false}},
    {ArrayFormat::p016, {"p016", K::video, 0, 0, false, false}},
    {ArrayFormat::nv16, {"nv16", K::video, 0, 0, false, false}},
    {ArrayFormat::p210, {"p210", K::video, 0, 0, false, false}},
    {ArrayFormat::p216, {"p216", K::video, 0, 0, false, false}},
    {ArrayFormat::yuy2, {"yuy2", K::video, 0, 0, false, false}},
    {ArrayFormat::y210, {"y210", K::video, 0, 0, false, false}},
    {ArrayFormat::y216, {"y216", K::video, 0, 0, false, false}},
    {ArrayFormat::ayuv, {"ayuv", K::video, 0, 0, false, false}},
    {ArrayFormat::y410, {"y410", K::video, 0, 0, false, false}},
    {ArrayFormat::y416, {"y416", K::video, 0, 0, false, false}},
    {ArrayFormat::y444_planar8, {"y444_planar8", K::video, 0, 0, false, false}},
    {ArrayFormat::y444_planar10, {"y444_planar10", K::video, 0, 0, false, false}},
    {ArrayFormat::yuv444_8bit_semiplanar, {"yuv444_8bit_semiplanar", K::video, 0, 0, false, false}},
    {ArrayFormat::yuv444_16bit_semiplanar,
     {"yuv444_16bit_semiplanar", K::video, 0, 0, false, false}},
};

const ArrayFormatInfo* find(ArrayFormat format) noexcept {
    for (const Entry& entry : entries)
        if (entry.format == format) return &entry.info;
    return nullptr;
}

}  // namespace

bool is_known(ArrayFormat format) noexcept { return find(format) != nullptr; }

const ArrayFormatInfo& format_info(ArrayFormat format) {
    if (const ArrayFormatInfo* info = find(format)) return *info;
    throw InvalidArgumentError("format_info: " + to_string(format) +
                               " is not a format of the CUDA driver cudacore was built for");
}

std::string to_string(ArrayFormat format) {
    if (const ArrayFormatInfo* info = find(format)) return info->name;
    char text[40];
    std::snprintf(text, sizeof text, "ArrayFormat(0x%x)", static_cast<unsigned>(format));
    return text;
}

unsigned resolve_channels(ArrayFormat format, unsigned channels, const std::string& what) {
    const ArrayFormatInfo* info = find(format);
    if (!info)
        throw InvalidArgumentError(what + ": the format " + to_string(format) +
                                   " is not a format of the CUDA driver cudacore was built for");
    switch (info->kind) {
        case ArrayFormatKind::plain:
            if (channels == 0) return 1;
            if (channels == 1 || channels == 2 || channels == 4) return channels;
            throw InvalidArgumentError(what + " is " + std::to_string(channels) + "; format " +
                                       info->name + " takes 1, 2 or 4 channels");
        case ArrayFormatKind::packed:
        case ArrayFormatKind::block_compressed:
            if (channels == 0 || channels == info->channels) return info->channels;
            throw InvalidArgumentError(what + " is " + std::to_string(channels) + "; format " +
                                       info->name + " has " + std::to_string(info->channels) +
                                       " channel(s) (give 0 or " +
                                       std::to_string(info->channels) + ")");
        case ArrayFormatKind::video:
            if (channels >= 1 && channels <= 4) return channels;
            throw InvalidArgumentError(what + " is " + std::to_string(channels) +
                                       "; the video format " + info->name +
                                       " needs the channel count the driver documents for it "
                                       "(1 to 4)");
    }
    return channels;
}

std::size_t element_size(ArrayFormat format, unsigned channels) {
    const unsigned resolved = resolve_channels(format, channels, "element_size: channels");
    const ArrayFormatInfo& info = *find(format);
    return info.kind == ArrayFormatKind::plain ? std::size_t{info.bytes} * resolved
                                               : std::size_t{info.bytes};
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(ArrayFormatKind kind) {
    static constexpr detail::EnumText<ArrayFormatKind> names[] = {
        {ArrayFormatKind::plain, "plain"},
        {ArrayFormatKind::packed, "packed"},
        {ArrayFormatKind::block_compressed, "block_compressed"},
        {ArrayFormatKind::video, "video"},
    };
    return detail::enum_text(kind, names, "ArrayFormatKind");
}

}  // namespace cudacore
