#include "cudacore/texture.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"
#include "support/enum_text.hpp"
#include "views/array_box.hpp"
#include "views/object_descriptions.hpp"
#include "views/texture_layout_checks.hpp"

#include <cmath>
#include <cstdio>

namespace cudacore {

namespace detail {

// What a texture reads, kept as facts and put into words only when asked (an error,
// description()): built at each creation, the words cost several string allocations that are
// almost never read.
struct TextureReads {
    enum class Kind : unsigned char { array, mipmapped_array, linear, pitch2d };
    Kind kind = Kind::array;
    ArrayFormat format = ArrayFormat::float32;  // linear and pitch2d
    std::size_t width = 0, height = 0, pitch = 0;  // linear: width; pitch2d: all three
};

struct TextureBox {
    CUtexObject handle = 0;
    std::shared_ptr<ContextBox> context;
    std::shared_ptr<void> held;  // the ArrayBox, MipmappedArrayBox or Buffer it reads
    TextureOptions options;
    TextureReads reads;
    int ordinal = 0;
    LaunchStreams uses;
    TextureBox() {}
    ~TextureBox() {
        std::function<void(const DriverApi&)> destroy;
        if (handle) {
            try {
                destroy = [texture = handle, ordinal = ordinal](const DriverApi& api) {
                    check_release(api.cuTexObjectDestroy(texture), "cuTexObjectDestroy", [&] {
                        return "texture object " + std::to_string(texture) + " on device " +
                               std::to_string(ordinal);
                    });
                };
            } catch (...) {
                return;  // out of memory: leaked to the driver
            }
        }
        release_after_uses(uses, context, std::move(destroy), std::move(held));
    }
    TextureBox(const TextureBox&) = delete;
    TextureBox& operator=(const TextureBox&) = delete;

    // What it reads, described ("2D CUDA array float32 64 x 64 on device 0").
    std::string describe_source() const {
        switch (reads.kind) {
            case TextureReads::Kind::array:
                return BoxAccess::make<CudaArray>(std::static_pointer_cast<ArrayBox>(held))
                    .description();
            case TextureReads::Kind::mipmapped_array:
                return BoxAccess::make<MipmappedArray>(
                           std::static_pointer_cast<MipmappedArrayBox>(held))
                    .description();
            case TextureReads::Kind::linear:
                return std::to_string(reads.width) + " " + to_string(reads.format) +
                       " elements of " + describe_buffer(*static_cast<const Buffer*>(held.get()));
            case TextureReads::Kind::pitch2d:
                return std::to_string(reads.width) + " x " + std::to_string(reads.height) + " " +
                       to_string(reads.format) + " (pitch " + std::to_string(reads.pitch) +
                       ") in " + describe_buffer(*static_cast<const Buffer*>(held.get()));
        }
        return "unknown memory";
    }
};

namespace {

[[noreturn]] void refuse_layout(const char* call, const std::string& problem) {
    throw InvalidArgumentError(std::string(call) + ": " + problem);
}

}  // namespace

std::size_t linear_element_size(const char* call, ArrayFormat format, unsigned channels,
                                unsigned& resolved_channels) {
    if (!is_known(format))
        refuse_layout(call, "the layout's format " + to_string(format) +
                         " is not a format of the CUDA driver cudacore was built for");
    const ArrayFormatInfo& info = format_info(format);
    if (info.kind != ArrayFormatKind::plain && info.kind != ArrayFormatKind::packed)
        refuse_layout(call, std::string("the layout's format ") + info.name +
                         " is block-compressed or video; textures over memory take plain and "
                         "packed formats (use a CudaArray)");
    resolved_channels = resolve_channels(format, channels, std::string(call) + ": channels");
    return element_size(format, resolved_channels);
}

std::size_t check_linear_layout(const char* call, const LinearTextureLayout& layout,
                                std::uintptr_t address, std::size_t buffer_bytes,
                                std::size_t element_size, const DeviceProperties& properties,
                                std::size_t max_width, const std::string& buffer_description) {
    const int alignment = properties.texture_alignment;
    if (alignment > 0 && address % static_cast<std::uintptr_t>(alignment) != 0)
        refuse_layout(call, buffer_description + " is not aligned to " + std::to_string(alignment) +
                         " bytes (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)");
    const std::size_t width = layout.width == 0 ? buffer_bytes / element_size : layout.width;
    if (width == 0)
        refuse_layout(call, buffer_description + " holds no whole element of " +
                         std::to_string(element_size) + " bytes");
    if (width > buffer_bytes / element_size)
        refuse_layout(call, "LinearTextureLayout::width " + std::to_string(width) + " elements of " +
                         std::to_string(element_size) + " bytes runs past the end of " +
                         buffer_description);
    if (max_width > 0 && width > max_width)
        refuse_layout(call, "LinearTextureLayout::width " + std::to_string(width) +
                         " exceeds the device's linear texture width limit " +
                         std::to_string(max_width) + " for this format and channel count "
                         "(cuDeviceGetTexture1DLinearMaxWidth)");
    return width;
}

void check_pitch2d_layout(const char* call, const Pitch2DTextureLayout& layout,
                          std::uintptr_t address, std::size_t buffer_bytes,
                          std::size_t element_size, const DeviceProperties& p,
                          const std::string& buffer_description) {
    if (layout.width == 0 || layout.height == 0)
        refuse_layout(call, "Pitch2DTextureLayout width and height must be at least 1 (they are " +
                         std::to_string(layout.width) + " x " + std::to_string(layout.height) +
                         ")");
    if (p.texture_alignment > 0 && address % static_cast<std::uintptr_t>(p.texture_alignment) != 0)
        refuse_layout(call, buffer_description + " is not aligned to " +
                         std::to_string(p.texture_alignment) +
                         " bytes (CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)");
    auto limit = [&](const char* field, std::size_t value, int max, const char* attribute) {
        if (max > 0 && value > static_cast<std::size_t>(max))
            refuse_layout(call, std::string("Pitch2DTextureLayout::") + field + " " +
                             std::to_string(value) + " exceeds the device's limit " +
                             std::to_string(max) + " (CU_DEVICE_ATTRIBUTE_" + attribute + ")");
    };
    limit("width", layout.width, p.maximum_texture2d_linear_width, "MAXIMUM_TEXTURE2D_LINEAR_WIDTH");
    limit("height", layout.height, p.maximum_texture2d_linear_height,
          "MAXIMUM_TEXTURE2D_LINEAR_HEIGHT");
    limit("pitch", layout.pitch, p.maximum_texture2d_linear_pitch, "MAXIMUM_TEXTURE2D_LINEAR_PITCH");
    std::size_t row_bytes = 0;
    if (__builtin_mul_overflow(layout.width, element_size, &row_bytes) || layout.pitch < row_bytes)
        refuse_layout(call, "Pitch2DTextureLayout::pitch " + std::to_string(layout.pitch) +
                         " is less than a row (" + std::to_string(layout.width) + " elements of " +
                         std::to_string(element_size) + " bytes)");
    if (p.texture_pitch_alignment > 0 &&
        layout.pitch % static_cast<std::size_t>(p.texture_pitch_alignment) != 0)
        refuse_layout(call, "Pitch2DTextureLayout::pitch " + std::to_string(layout.pitch) +
                         " is not a multiple of " + std::to_string(p.texture_pitch_alignment) +
                         " (CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)");
    std::size_t needed = 0;
    if (__builtin_mul_overflow(layout.pitch, layout.height - 1, &needed) ||
        __builtin_add_overflow(needed, row_bytes, &needed) || needed > buffer_bytes)
        refuse_layout(call, std::to_string(layout.height) + " rows of pitch " +
                         std::to_string(layout.pitch) + " run past the end of " +
                         buffer_description);
}

namespace {

CUaddress_mode driver_address_mode(TextureAddressMode mode) {
    switch (mode) {
        case TextureAddressMode::wrap: return CU_TR_ADDRESS_MODE_WRAP;
        case TextureAddressMode::clamp: return CU_TR_ADDRESS_MODE_CLAMP;
        case TextureAddressMode::mirror: return CU_TR_ADDRESS_MODE_MIRROR;
        case TextureAddressMode::border: return CU_TR_ADDRESS_MODE_BORDER;
    }
    return CU_TR_ADDRESS_MODE_CLAMP;
}

CUfilter_mode driver_filter_mode(TextureFilterMode mode) {
    return mode == TextureFilterMode::linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
}

// The one place TextureOptions become a CUDA_TEXTURE_DESC.
CUDA_TEXTURE_DESC texture_descriptor(const TextureOptions& options) {
    CUDA_TEXTURE_DESC descriptor{};
    for (int i = 0; i < 3; ++i) descriptor.addressMode[i] = driver_address_mode(options.address_modes[i]);
    descriptor.filterMode = driver_filter_mode(options.filter);
    descriptor.flags = (options.read_mode == TextureReadMode::element_type ? CU_TRSF_READ_AS_INTEGER : 0u) |
                       (options.normalized_coordinates ? CU_TRSF_NORMALIZED_COORDINATES : 0u) |
                       (options.srgb ? CU_TRSF_SRGB : 0u) |
                       (options.disable_trilinear_optimization ? CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION : 0u) |
                       (options.seamless_cubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0u);
    descriptor.maxAnisotropy = options.max_anisotropy;
    descriptor.mipmapFilterMode = driver_filter_mode(options.mipmap_filter);
    descriptor.mipmapLevelBias = options.mipmap_level_bias;
    descriptor.minMipmapLevelClamp = options.min_mipmap_level_clamp;
    descriptor.maxMipmapLevelClamp = options.max_mipmap_level_clamp;
    for (int i = 0; i < 4; ++i) descriptor.borderColor[i] = options.border_color[i];
    return descriptor;
}

// Creates the texture in `context` and returns its box, holding `held` (which `reads` describes).
std::shared_ptr<TextureBox> create_texture(const CUDA_RESOURCE_DESC& resource,
                                           const TextureOptions& options,
                                           const std::shared_ptr<ContextBox>& context, int ordinal,
                                           std::shared_ptr<void> held, const TextureReads& reads) {
    auto box = std::make_shared<TextureBox>();
    box->options = options;
    box->ordinal = ordinal;
    box->reads = reads;
    // Held from the start, for the error's words; with no handle yet, a failure destroys nothing.
    box->held = std::move(held);
    const CUDA_TEXTURE_DESC descriptor = texture_descriptor(options);
    start_deferred_releases();  // the release may wait for launches (release_after_uses)
    {
        ContextScope scope(*context);
        check(driver().cuTexObjectCreate(&box->handle, &resource, &descriptor, nullptr),
              "cuTexObjectCreate", [&] { return "texture object over " + box->describe_source(); });
    }
    box->context = context;
    return box;
}

}  // namespace

}  // namespace detail

namespace {
// The options' enumerations hold values of their types.
void check_texture_enums(const TextureOptions& options, const char* call) {
    auto refuse = [call](const std::string& problem) { detail::refuse_layout(call, problem); };
    for (std::size_t i = 0; i < 3; ++i) {
        const int mode = static_cast<int>(options.address_modes[i]);
        if (mode < 0 || mode > 3)
            refuse("TextureOptions::address_modes[" + std::to_string(i) +
                   "] is not a TextureAddressMode (value " + std::to_string(mode) + ")");
    }
    const int filter = static_cast<int>(options.filter);
    if (filter < 0 || filter > 1)
        refuse("TextureOptions::filter is not a TextureFilterMode (value " + std::to_string(filter) + ")");
    const int mipmap_filter = static_cast<int>(options.mipmap_filter);
    if (mipmap_filter < 0 || mipmap_filter > 1)
        refuse("TextureOptions::mipmap_filter is not a TextureFilterMode (value " +
               std::to_string(mipmap_filter) + ")");
    const int read = static_cast<int>(options.read_mode);
    if (read < 0 || read > 1)
        refuse("TextureOptions::read_mode is not a TextureReadMode (value " + std::to_string(read) + ")");
}
}  // namespace

void check_texture_options(const TextureOptions& options, const TextureSource& source,
                           const char* call) {
    auto refuse = [call](const std::string& problem) { detail::refuse_layout(call, problem); };
    check_texture_enums(options, call);
    if (!is_known(source.format))
        refuse("the texture's format " + to_string(source.format) +
               " is not a format of the CUDA driver cudacore was built for");
    const ArrayFormatInfo& format = format_info(source.format);

    if (!source.linear && !options.normalized_coordinates) {
        static const char* const axes[3] = {"x", "y", "z"};
        for (std::size_t i = 0; i < 3; ++i) {
            const TextureAddressMode mode = options.address_modes[i];
            if (mode == TextureAddressMode::wrap || mode == TextureAddressMode::mirror)
                refuse(std::string("TextureOptions::address_modes[") + std::to_string(i) + "] (" +
                       axes[i] + ") is " + (mode == TextureAddressMode::wrap ? "wrap" : "mirror") +
                       ", which needs normalized_coordinates (unnormalized coordinates take "
                       "clamp or border)");
        }
    }
    const bool wide_integer = format.is_integer && format.bytes == 4;
    if (options.read_mode == TextureReadMode::normalized_float && wide_integer)
        refuse(std::string("TextureOptions::read_mode is normalized_float, but format ") +
               format.name + " is a 32-bit integer, which texture reads never normalize");
    const bool returns_float =
        !format.is_integer || options.read_mode == TextureReadMode::normalized_float;
    if (!source.linear && options.filter == TextureFilterMode::linear && !returns_float)
        refuse(std::string("TextureOptions::filter is linear, but fetches of format ") +
               format.name +
               " read as element_type return integers; linear filtering needs floating point "
               "(a float format, or 8/16-bit integers with read_mode normalized_float)");
    if (source.mipmapped && options.mipmap_filter == TextureFilterMode::linear && !returns_float)
        refuse(std::string("TextureOptions::mipmap_filter is linear, but fetches of format ") +
               format.name + " read as element_type return integers");
    if (options.max_anisotropy > 16)
        refuse("TextureOptions::max_anisotropy is " + std::to_string(options.max_anisotropy) +
               "; it must be 0 to 16");
    if (!std::isfinite(options.mipmap_level_bias) || !std::isfinite(options.min_mipmap_level_clamp) ||
        !std::isfinite(options.max_mipmap_level_clamp))
        refuse("TextureOptions mipmap_level_bias and the mipmap level clamps must be finite");
    if (options.min_mipmap_level_clamp < 0)
        refuse("TextureOptions::min_mipmap_level_clamp is " +
               std::to_string(options.min_mipmap_level_clamp) + "; it must not be negative");
    if (options.max_mipmap_level_clamp < options.min_mipmap_level_clamp)
        refuse("TextureOptions::max_mipmap_level_clamp " +
               std::to_string(options.max_mipmap_level_clamp) + " is below min_mipmap_level_clamp " +
               std::to_string(options.min_mipmap_level_clamp));
    if (source.mipmapped && !options.normalized_coordinates)
        refuse("a texture over a mipmapped array needs TextureOptions::normalized_coordinates");
    if (options.seamless_cubemap && !source.cubemap)
        refuse("TextureOptions::seamless_cubemap is set on a texture that is not over a cubemap");
}

TextureObject TextureObject::from_array(const CudaArray& array, const TextureOptions& options) {
    constexpr const char* call = "TextureObject::from_array";
    const auto& array_box = detail::open_box_of(array, call);
    check_texture_options(options,
                          {.format = array_box->options.format, .cubemap = array_box->options.cubemap},
                          call);
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array_box->handle;
    return detail::BoxAccess::make<TextureObject>(detail::create_texture(resource, options, array_box->context,
                                                array_box->ordinal, array_box,
                                                {.kind = detail::TextureReads::Kind::array}));
}

TextureObject TextureObject::from_mipmapped_array(const MipmappedArray& array,
                                                  const TextureOptions& options) {
    constexpr const char* call = "TextureObject::from_mipmapped_array";
    const auto& array_box = detail::open_box_of(array, call);
    check_texture_options(options,
                          {.format = array_box->options.format,
                           .cubemap = array_box->options.cubemap,
                           .mipmapped = true},
                          call);
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    resource.res.mipmap.hMipmappedArray = array_box->handle;
    return detail::BoxAccess::make<TextureObject>(
        detail::create_texture(resource, options, array_box->context, array_box->ordinal,
                               array_box, {.kind = detail::TextureReads::Kind::mipmapped_array}));
}

namespace {

// The checks every texture over memory makes of its buffer first; returns its device.
int memory_device(const char* call, const Buffer& buffer) {
    if (buffer.is_closed())
        throw InvalidArgumentError(std::string(call) + ": the Buffer is closed (or empty)");
    if (!buffer.is_device_accessible())
        throw InvalidArgumentError(std::string(call) + ": " + buffer.description() +
                                   " is not device-accessible; textures read device memory");
    const int ordinal = buffer.device_ordinal();
    if (ordinal < 0)
        throw InvalidArgumentError(std::string(call) + ": " + buffer.description() +
                                   " is bound to no device; textures read device memory");
    return ordinal;
}

}  // namespace

TextureObject TextureObject::from_linear(const Buffer& buffer, const LinearTextureLayout& layout,
                                         const TextureOptions& options) {
    constexpr const char* call = "TextureObject::from_linear";
    unsigned channels = 0;
    const std::size_t element_size =
        detail::linear_element_size(call, layout.format, layout.channels, channels);
    check_texture_options(options, {.format = layout.format, .linear = true}, call);
    const int ordinal = memory_device(call, buffer);
    const Device device(ordinal);
    std::size_t max_width = 0;
    detail::check(detail::driver().cuDeviceGetTexture1DLinearMaxWidth(
                      &max_width, static_cast<CUarray_format>(layout.format), channels,
                      device.handle()),
                  "cuDeviceGetTexture1DLinearMaxWidth",
                  [&] { return to_string(layout.format) + " on device " + std::to_string(ordinal); });
    const std::string description = detail::describe_buffer(buffer);
    const std::size_t width = detail::check_linear_layout(
        call, layout, buffer.handle(), buffer.size(), element_size, device.properties(),
        max_width, description);
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_LINEAR;
    resource.res.linear.devPtr = buffer.handle();
    resource.res.linear.format = static_cast<CUarray_format>(layout.format);
    resource.res.linear.numChannels = channels;
    resource.res.linear.sizeInBytes = width * element_size;
    return detail::BoxAccess::make<TextureObject>(detail::create_texture(
        resource, options, detail::primary_context(ordinal), ordinal,
        std::make_shared<Buffer>(buffer),
        {.kind = detail::TextureReads::Kind::linear, .format = layout.format, .width = width}));
}

TextureObject TextureObject::from_pitch2d(const Buffer& buffer, const Pitch2DTextureLayout& layout,
                                          const TextureOptions& options) {
    constexpr const char* call = "TextureObject::from_pitch2d";
    unsigned channels = 0;
    const std::size_t element_size =
        detail::linear_element_size(call, layout.format, layout.channels, channels);
    check_texture_options(options, {.format = layout.format}, call);
    const int ordinal = memory_device(call, buffer);
    const Device device(ordinal);
    const std::string description = detail::describe_buffer(buffer);
    detail::check_pitch2d_layout(call, layout, buffer.handle(), buffer.size(), element_size,
                                 device.properties(), description);
    CUDA_RESOURCE_DESC resource{};
    resource.resType = CU_RESOURCE_TYPE_PITCH2D;
    resource.res.pitch2D.devPtr = buffer.handle();
    resource.res.pitch2D.format = static_cast<CUarray_format>(layout.format);
    resource.res.pitch2D.numChannels = channels;
    resource.res.pitch2D.width = layout.width;
    resource.res.pitch2D.height = layout.height;
    resource.res.pitch2D.pitchInBytes = layout.pitch;
    return detail::BoxAccess::make<TextureObject>(detail::create_texture(
        resource, options, detail::primary_context(ordinal), ordinal,
        std::make_shared<Buffer>(buffer),
        {.kind = detail::TextureReads::Kind::pitch2d,
         .format = layout.format,
         .width = layout.width,
         .height = layout.height,
         .pitch = layout.pitch}));
}

const TextureOptions& TextureObject::options() const noexcept {
    static const TextureOptions none{};
    return box() ? box()->options : none;
}
int TextureObject::device_ordinal() const noexcept { return box() ? box()->ordinal : -1; }

std::string TextureObject::description() const {
    if (!box()) return is_closed() ? closed_description() + " (closed)" : "moved-from TextureObject";
    return "texture object " + std::to_string(box()->handle) + " over " + box()->describe_source();
}

void TextureObject::note_launch(const Stream& stream) const {
    if (box() && detail::box_of(stream)) box()->uses.note(detail::box_of(stream));
}


void TextureObject::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore

namespace cudacore {

std::string to_string(TextureAddressMode mode) {
    static constexpr detail::EnumText<TextureAddressMode> names[] = {
        {TextureAddressMode::clamp, "clamp"},
        {TextureAddressMode::wrap, "wrap"},
        {TextureAddressMode::mirror, "mirror"},
        {TextureAddressMode::border, "border"},
    };
    return detail::enum_text(mode, names, "TextureAddressMode");
}

std::string to_string(TextureFilterMode mode) {
    static constexpr detail::EnumText<TextureFilterMode> names[] = {
        {TextureFilterMode::point, "point"},
        {TextureFilterMode::linear, "linear"},
    };
    return detail::enum_text(mode, names, "TextureFilterMode");
}

std::string to_string(TextureReadMode mode) {
    static constexpr detail::EnumText<TextureReadMode> names[] = {
        {TextureReadMode::element_type, "element_type"},
        {TextureReadMode::normalized_float, "normalized_float"},
    };
    return detail::enum_text(mode, names, "TextureReadMode");
}

}  // namespace cudacore
