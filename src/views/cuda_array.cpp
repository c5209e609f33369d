#include "cudacore/cuda_array.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/errors.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"
#include "support/enum_text.hpp"
#include "views/array_box.hpp"

#include <cstdio>
#include <optional>

namespace cudacore {

std::string to_string(ArrayShape shape) {
    static constexpr detail::EnumText<ArrayShape> names[] = {
        {ArrayShape::one_d, "one_d"},
        {ArrayShape::two_d, "two_d"},
        {ArrayShape::three_d, "three_d"},
        {ArrayShape::one_d_layered, "one_d_layered"},
        {ArrayShape::two_d_layered, "two_d_layered"},
        {ArrayShape::cubemap, "cubemap"},
        {ArrayShape::cubemap_layered, "cubemap_layered"},
    };
    return detail::enum_text(shape, names, "ArrayShape");
}

namespace {

// The shape in the words an array's description and messages use: "2D layered".
std::string shape_words(ArrayShape shape) {
    switch (shape) {
        case ArrayShape::one_d: return "1D";
        case ArrayShape::two_d: return "2D";
        case ArrayShape::three_d: return "3D";
        case ArrayShape::one_d_layered: return "1D layered";
        case ArrayShape::two_d_layered: return "2D layered";
        case ArrayShape::cubemap: return "cubemap";
        case ArrayShape::cubemap_layered: return "cubemap layered";
    }
    return to_string(shape);
}

}  // namespace

namespace {

[[noreturn]] void refuse(const char* call, const ArrayOptions& options, const std::string& problem) {
    throw InvalidArgumentError(std::string(call) + " (" + std::to_string(options.width) + " x " +
                               std::to_string(options.height) + " x " +
                               std::to_string(options.depth) + " " + to_string(options.format) +
                               "): " + problem);
}

// One limit: `value` of `field` must not exceed the device attribute `attribute` (0: unknown to
// the driver, not checked).
void within(const char* call, const ArrayOptions& options, const char* field, std::size_t value,
            int limit, const char* attribute, const char* what) {
    if (limit > 0 && value > static_cast<std::size_t>(limit))
        refuse(call, options,
               std::string("ArrayOptions::") + field + " " + std::to_string(value) +
                   " exceeds the device's " + what + " limit " + std::to_string(limit) +
                   " (CU_DEVICE_ATTRIBUTE_" + attribute + ")");
}

// Which of a shape's texture limits apply (one set per array), or the surface limits (with
// surface_load_store, beside them).
enum class LimitKind { texture, mipmapped_texture, gather_texture, surface };
// The extent a limit bounds: cubemaps is depth / 6 (6 faces each).
enum class LimitedExtent { width, height, depth, cubemaps };

struct ArrayLimit {
    ArrayShape shape;
    LimitKind kind;
    LimitedExtent extent;
    int DeviceProperties::*limit;
    const char* attribute;  // after CU_DEVICE_ATTRIBUTE_
    const char* what;
};

namespace array_limit_table {  // a namespace of its own for the short names of its rows
using enum ArrayShape;
using enum LimitKind;
using enum LimitedExtent;
using P = DeviceProperties;

// Every array limit of the driver, in the order they are checked.
constexpr ArrayLimit rows[] = {
    {one_d, mipmapped_texture, width, &P::maximum_texture1d_mipmapped_width,
     "MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH", "mipmapped 1D texture width"},
    {one_d, texture, width, &P::maximum_texture1d_width, "MAXIMUM_TEXTURE1D_WIDTH", "1D texture width"},
    {one_d, surface, width, &P::maximum_surface1d_width, "MAXIMUM_SURFACE1D_WIDTH", "1D surface width"},
    {two_d, mipmapped_texture, width, &P::maximum_texture2d_mipmapped_width,
     "MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH", "mipmapped 2D texture width"},
    {two_d, mipmapped_texture, height, &P::maximum_texture2d_mipmapped_height,
     "MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT", "mipmapped 2D texture height"},
    {two_d, gather_texture, width, &P::maximum_texture2d_gather_width, "MAXIMUM_TEXTURE2D_GATHER_WIDTH",
     "2D texture gather width"},
    {two_d, gather_texture, height, &P::maximum_texture2d_gather_height, "MAXIMUM_TEXTURE2D_GATHER_HEIGHT",
     "2D texture gather height"},
    {two_d, texture, width, &P::maximum_texture2d_width, "MAXIMUM_TEXTURE2D_WIDTH", "2D texture width"},
    {two_d, texture, height, &P::maximum_texture2d_height, "MAXIMUM_TEXTURE2D_HEIGHT", "2D texture height"},
    {two_d, surface, width, &P::maximum_surface2d_width, "MAXIMUM_SURFACE2D_WIDTH", "2D surface width"},
    {two_d, surface, height, &P::maximum_surface2d_height, "MAXIMUM_SURFACE2D_HEIGHT", "2D surface height"},
    {three_d, texture, width, &P::maximum_texture3d_width, "MAXIMUM_TEXTURE3D_WIDTH",
     "3D texture width (nor do the _ALTERNATE limits fit)"},
    {three_d, texture, height, &P::maximum_texture3d_height, "MAXIMUM_TEXTURE3D_HEIGHT",
     "3D texture height (nor do the _ALTERNATE limits fit)"},
    {three_d, texture, depth, &P::maximum_texture3d_depth, "MAXIMUM_TEXTURE3D_DEPTH",
     "3D texture depth (nor do the _ALTERNATE limits fit)"},
    {three_d, surface, width, &P::maximum_surface3d_width, "MAXIMUM_SURFACE3D_WIDTH", "3D surface width"},
    {three_d, surface, height, &P::maximum_surface3d_height, "MAXIMUM_SURFACE3D_HEIGHT", "3D surface height"},
    {three_d, surface, depth, &P::maximum_surface3d_depth, "MAXIMUM_SURFACE3D_DEPTH", "3D surface depth"},
    {one_d_layered, texture, width, &P::maximum_texture1d_layered_width, "MAXIMUM_TEXTURE1D_LAYERED_WIDTH",
     "1D layered texture width"},
    {one_d_layered, texture, depth, &P::maximum_texture1d_layered_layers, "MAXIMUM_TEXTURE1D_LAYERED_LAYERS",
     "1D layered texture layer count"},
    {one_d_layered, surface, width, &P::maximum_surface1d_layered_width, "MAXIMUM_SURFACE1D_LAYERED_WIDTH",
     "1D layered surface width"},
    {one_d_layered, surface, depth, &P::maximum_surface1d_layered_layers, "MAXIMUM_SURFACE1D_LAYERED_LAYERS",
     "1D layered surface layer count"},
    {two_d_layered, texture, width, &P::maximum_texture2d_layered_width, "MAXIMUM_TEXTURE2D_LAYERED_WIDTH",
     "2D layered texture width"},
    {two_d_layered, texture, height, &P::maximum_texture2d_layered_height, "MAXIMUM_TEXTURE2D_LAYERED_HEIGHT",
     "2D layered texture height"},
    {two_d_layered, texture, depth, &P::maximum_texture2d_layered_layers, "MAXIMUM_TEXTURE2D_LAYERED_LAYERS",
     "2D layered texture layer count"},
    {two_d_layered, surface, width, &P::maximum_surface2d_layered_width, "MAXIMUM_SURFACE2D_LAYERED_WIDTH",
     "2D layered surface width"},
    {two_d_layered, surface, height, &P::maximum_surface2d_layered_height, "MAXIMUM_SURFACE2D_LAYERED_HEIGHT",
     "2D layered surface height"},
    {two_d_layered, surface, depth, &P::maximum_surface2d_layered_layers, "MAXIMUM_SURFACE2D_LAYERED_LAYERS",
     "2D layered surface layer count"},
    {cubemap, texture, width, &P::maximum_texturecubemap_width, "MAXIMUM_TEXTURECUBEMAP_WIDTH",
     "cubemap texture width"},
    {cubemap, surface, width, &P::maximum_surfacecubemap_width, "MAXIMUM_SURFACECUBEMAP_WIDTH",
     "cubemap surface width"},
    {cubemap_layered, texture, width, &P::maximum_texturecubemap_layered_width,
     "MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH", "layered cubemap texture width"},
    {cubemap_layered, texture, cubemaps, &P::maximum_texturecubemap_layered_layers,
     "MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS", "layered cubemap texture cubemap count (depth / 6)"},
    {cubemap_layered, surface, width, &P::maximum_surfacecubemap_layered_width,
     "MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH", "layered cubemap surface width"},
    {cubemap_layered, surface, cubemaps, &P::maximum_surfacecubemap_layered_layers,
     "MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS", "layered cubemap surface cubemap count (depth / 6)"},
};

}  // namespace array_limit_table

// The texture limits an array of `shape` is held to: mipmapped 1D and 2D arrays and 2D arrays
// with texture gather have their own; a 3D array within the _ALTERNATE limits (wider and
// shallower) is held to none of the usual ones.
std::optional<LimitKind> texture_limits(const ArrayOptions& options, const DeviceProperties& p,
                                        ArrayShape shape, unsigned mipmap_levels) {
    if (shape == ArrayShape::three_d) {
        const bool alternate = p.maximum_texture3d_width_alternate > 0 &&
                               options.width <= std::size_t(p.maximum_texture3d_width_alternate) &&
                               options.height <= std::size_t(p.maximum_texture3d_height_alternate) &&
                               options.depth <= std::size_t(p.maximum_texture3d_depth_alternate);
        if (alternate) return std::nullopt;
    }
    if (shape != ArrayShape::one_d && shape != ArrayShape::two_d) return LimitKind::texture;
    if (mipmap_levels > 0) return LimitKind::mipmapped_texture;
    if (shape == ArrayShape::two_d && options.texture_gather) return LimitKind::gather_texture;
    return LimitKind::texture;
}

void check_array_limits(const ArrayOptions& options, const DeviceProperties& p, const char* call,
                        ArrayShape shape, unsigned mipmap_levels) {
    const std::optional<LimitKind> texture = texture_limits(options, p, shape, mipmap_levels);
    for (const ArrayLimit& limit : array_limit_table::rows) {
        if (limit.shape != shape) continue;
        if (limit.kind == LimitKind::surface ? !options.surface_load_store : limit.kind != texture) continue;
        const std::size_t value = limit.extent == LimitedExtent::width    ? options.width
                                  : limit.extent == LimitedExtent::height ? options.height
                                  : limit.extent == LimitedExtent::depth  ? options.depth
                                                                          : options.depth / 6;
        const char* field = limit.extent == LimitedExtent::width    ? "width"
                            : limit.extent == LimitedExtent::height ? "height"
                                                                    : "depth";
        within(call, options, field, value, p.*limit.limit, limit.attribute, limit.what);
    }
}

}  // namespace

ArrayShape array_shape(const ArrayOptions& options, const char* call) {
    if (options.width == 0) refuse(call, options, "ArrayOptions::width is 0");
    if (options.cubemap) {
        if (options.width != options.height)
            refuse(call, options,
                   "a cubemap needs width == height (faces are square); height is " +
                       std::to_string(options.height));
        if (options.layered) {
            if (options.depth == 0 || options.depth % 6 != 0)
                refuse(call, options,
                       "a layered cubemap needs depth a multiple of 6 (6 faces x layers); depth "
                       "is " + std::to_string(options.depth));
            return ArrayShape::cubemap_layered;
        }
        if (options.depth != 6)
            refuse(call, options,
                   "a cubemap needs depth 6 (its faces); depth is " + std::to_string(options.depth));
        return ArrayShape::cubemap;
    }
    if (options.layered) {
        if (options.depth == 0)
            refuse(call, options, "a layered array needs depth (its layer count) of at least 1");
        return options.height == 0 ? ArrayShape::one_d_layered : ArrayShape::two_d_layered;
    }
    if (options.height == 0) {
        if (options.depth != 0)
            refuse(call, options,
                   "depth " + std::to_string(options.depth) +
                       " without a height: a 3D array needs width, height and depth");
        return ArrayShape::one_d;
    }
    return options.depth == 0 ? ArrayShape::two_d : ArrayShape::three_d;
}

void check_array_options(const ArrayOptions& options, const DeviceProperties& p, const char* call,
                         unsigned mipmap_levels) {
    if (!is_known(options.format))
        refuse(call, options,
               "ArrayOptions::format " + to_string(options.format) +
                   " is not a format of the CUDA driver cudacore was built for");
    resolve_channels(options.format, options.channels,
                     std::string(call) + ": ArrayOptions::channels");
    const ArrayShape shape = array_shape(options, call);
    const ArrayFormatInfo& format = format_info(options.format);
    if (options.texture_gather && shape != ArrayShape::two_d)
        refuse(call, options,
               "ArrayOptions::texture_gather is set on a " + shape_words(shape) +
                   " array; texture gather works on 2D arrays only");
    if (options.surface_load_store && format.kind == ArrayFormatKind::block_compressed)
        refuse(call, options,
               "ArrayOptions::surface_load_store is set on block-compressed format " +
                   std::string(format.name) + ", which surfaces cannot write");
    if (mipmap_levels > 0 && options.texture_gather)
        refuse(call, options, "ArrayOptions::texture_gather is not offered for mipmapped arrays");

    check_array_limits(options, p, call, shape, mipmap_levels);
}

namespace detail {

std::string describe_array(const ArrayOptions& options, ArrayShape shape) {
    std::string text = shape_words(shape) + " CUDA array " + to_string(options.format);
    if (options.channels > 1 && is_known(options.format) &&
        format_info(options.format).kind == ArrayFormatKind::plain)
        text += "x" + std::to_string(options.channels);
    text += " " + std::to_string(options.width);
    if (options.height) text += " x " + std::to_string(options.height);
    if (options.depth) {
        text += (shape == ArrayShape::three_d ? " x " : ", ") + std::to_string(options.depth);
        if (shape != ArrayShape::three_d) text += " layers";
    }
    if (options.surface_load_store) text += " (surface load/store)";
    if (options.texture_gather) text += " (texture gather)";
    return text;
}

ArrayBox::~ArrayBox() {
    std::function<void(const DriverApi&)> destroy;
    if (handle && !parent && !owner) {
        try {
            destroy = [array = handle, ordinal = ordinal](const DriverApi& api) {
                check_release(api.cuArrayDestroy(array), "cuArrayDestroy", [&] {
                    char text[64];
                    std::snprintf(text, sizeof text, "CUDA array %p on device %d",
                                  static_cast<void*>(array), ordinal);
                    return std::string(text);
                });
            };
        } catch (...) {
            return;  // out of memory: leaked to the driver
        }
    }
    // A view releases nothing itself: it holds its mipmapped array (or the resource that owns the
    // array) until its copies are done.
    std::shared_ptr<void> held = std::move(owner);
    if (parent) held = std::move(parent);
    release_after_uses(uses, context, std::move(destroy), std::move(held));
}

}  // namespace detail

namespace {

// The array of `options` on `device`, made in `context` when one is given, else in the device's
// primary context (retained anew if someone reset it).
CudaArray create_array(const Device& device, const ArrayOptions& options,
                       const std::shared_ptr<detail::ContextBox>& context) {
    constexpr const char* call = "CudaArray::create";
    check_array_options(options, device.properties(), call);
    auto box = std::make_shared<detail::ArrayBox>();
    box->options = options;
    box->options.channels =
        resolve_channels(options.format, options.channels, "CudaArray::create: channels");
    box->shape = array_shape(options, call);
    box->element_size = cudacore::element_size(options.format, box->options.channels);
    box->ordinal = device.ordinal();

    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = options.width;
    descriptor.Height = options.height;
    descriptor.Depth = options.depth;
    descriptor.Format = static_cast<CUarray_format>(options.format);
    descriptor.NumChannels = box->options.channels;
    descriptor.Flags = (options.layered ? CUDA_ARRAY3D_LAYERED : 0u) |
                       (options.cubemap ? CUDA_ARRAY3D_CUBEMAP : 0u) |
                       (options.surface_load_store ? CUDA_ARRAY3D_SURFACE_LDST : 0u) |
                       (options.texture_gather ? CUDA_ARRAY3D_TEXTURE_GATHER : 0u);
    detail::start_deferred_releases();  // its release may wait for copies (release_after_uses)
    auto create_in = [&](const std::shared_ptr<detail::ContextBox>& in) {
        detail::ContextScope scope(*in);
        detail::check(detail::driver().cuArray3DCreate(&box->handle, &descriptor),
                      "cuArray3DCreate", [&] {
                          return detail::describe_array(box->options, box->shape) +
                                 " on device " + std::to_string(device.ordinal()) +
                                 (in->retained ? "" : " (" + detail::describe_context(*in) + ")");
                      });
        box->context = in;
        return 0;
    };
    if (context) create_in(context);
    else detail::with_primary_context(device.ordinal(), create_in);
    return detail::BoxAccess::make<CudaArray>(std::move(box));
}

}  // namespace

CudaArray CudaArray::create(const Device& device, const ArrayOptions& options) {
    return create_array(device, options, nullptr);
}

CudaArray CudaArray::create(const Context& context, const ArrayOptions& options) {
    const auto& box = detail::open_box_of(context, "CudaArray::create");
    return create_array(Device(box->ordinal), options, box);
}

const ArrayOptions& CudaArray::options() const noexcept {
    static const ArrayOptions none{};
    return box() ? box()->options : none;
}
ArrayShape CudaArray::shape() const noexcept { return box() ? box()->shape : ArrayShape::one_d; }
std::size_t CudaArray::element_size() const noexcept { return box() ? box()->element_size : 0; }
int CudaArray::device_ordinal() const noexcept { return box() ? box()->ordinal : -1; }
int CudaArray::mipmap_level() const noexcept { return box() ? box()->level : -1; }

std::string CudaArray::description() const {
    if (!box()) return is_closed() ? closed_description() + " (closed)" : "moved-from CudaArray";
    std::string text = detail::describe_array(box()->options, box()->shape);
    if (box()->level >= 0) text += ", level " + std::to_string(box()->level) + " of a mipmapped array";
    return text + " on device " + std::to_string(box()->ordinal);
}


void CudaArray::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore
