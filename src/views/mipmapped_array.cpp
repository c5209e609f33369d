#include "cudacore/mipmapped_array.hpp"

#include "cudacore/device.hpp"
#include "cudacore/device_properties.hpp"
#include "cudacore/errors.hpp"
#include "runtime/release/release.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"
#include "errors/closed_object.hpp"
#include "views/array_box.hpp"

#include <algorithm>
#include <cstdio>

namespace cudacore {

unsigned full_mipmap_levels(const ArrayOptions& options) {
    const ArrayShape shape = array_shape(options, "full_mipmap_levels");
    std::size_t largest = std::max(options.width, options.height);
    if (shape == ArrayShape::three_d) largest = std::max(largest, options.depth);
    unsigned levels = 1;
    while (largest > 1) {
        largest >>= 1;
        ++levels;
    }
    return levels;
}

namespace {

// The options of level `level` of a chain whose level 0 is `base`.
ArrayOptions level_of(const ArrayOptions& base, ArrayShape shape, unsigned level) {
    auto halve = [level](std::size_t size) {
        return size == 0 ? 0 : std::max<std::size_t>(1, size >> level);
    };
    ArrayOptions options = base;
    options.width = halve(base.width);
    options.height = halve(base.height);
    if (shape == ArrayShape::three_d) options.depth = halve(base.depth);  // layers stay
    return options;
}

}  // namespace

namespace detail {

MipmappedArrayBox::~MipmappedArrayBox() {
    std::function<void(const DriverApi&)> destroy;
    if (handle) {
        try {
            destroy = [array = handle, ordinal = ordinal](const DriverApi& api) {
                check_release(api.cuMipmappedArrayDestroy(array), "cuMipmappedArrayDestroy", [&] {
                    char text[72];
                    std::snprintf(text, sizeof text, "mipmapped CUDA array %p on device %d",
                                  static_cast<void*>(array), ordinal);
                    return std::string(text);
                });
            };
        } catch (...) {
            return;  // out of memory: leaked to the driver
        }
    }
    release_after_uses(uses, context, std::move(destroy), nullptr);
}

}  // namespace detail

namespace {

// The mipmapped array on `device`, made in `context` when one is given, else in the device's
// primary context (retained anew if someone reset it).
MipmappedArray create_mipmapped(const Device& device, const ArrayOptions& options, unsigned levels,
                                const std::shared_ptr<detail::ContextBox>& context) {
    constexpr const char* call = "MipmappedArray::create";
    check_array_options(options, device.properties(), call, levels == 0 ? 1 : levels);
    const unsigned most = full_mipmap_levels(options);
    if (levels == 0 || levels > most)
        throw InvalidArgumentError(std::string(call) + " (" + std::to_string(options.width) +
                                   " x " + std::to_string(options.height) + " x " +
                                   std::to_string(options.depth) + "): levels is " +
                                   std::to_string(levels) + "; it must be 1 to " +
                                   std::to_string(most) + " (down to a size of 1)");
    auto box = std::make_shared<detail::MipmappedArrayBox>();
    box->options = options;
    box->options.channels = resolve_channels(options.format, options.channels,
                                             "MipmappedArray::create: channels");
    box->shape = array_shape(options, call);
    box->levels = levels;
    box->ordinal = device.ordinal();

    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    descriptor.Width = options.width;
    descriptor.Height = options.height;
    descriptor.Depth = options.depth;
    descriptor.Format = static_cast<CUarray_format>(options.format);
    descriptor.NumChannels = box->options.channels;
    descriptor.Flags = (options.layered ? CUDA_ARRAY3D_LAYERED : 0u) |
                       (options.cubemap ? CUDA_ARRAY3D_CUBEMAP : 0u) |
                       (options.surface_load_store ? CUDA_ARRAY3D_SURFACE_LDST : 0u);
    detail::start_deferred_releases();
    auto create_in = [&](const std::shared_ptr<detail::ContextBox>& in) {
        detail::ContextScope scope(*in);
        detail::check(detail::driver().cuMipmappedArrayCreate(&box->handle, &descriptor, levels),
                      "cuMipmappedArrayCreate", [&] {
                          return "mipmapped " + detail::describe_array(box->options, box->shape) +
                                 ", " + std::to_string(levels) + " levels on device " +
                                 std::to_string(device.ordinal()) +
                                 (in->retained ? "" : " (" + detail::describe_context(*in) + ")");
                      });
        box->context = in;
        return 0;
    };
    if (context) create_in(context);
    else detail::with_primary_context(device.ordinal(), create_in);
    return detail::BoxAccess::make<MipmappedArray>(std::move(box));
}

}  // namespace

MipmappedArray MipmappedArray::create(const Device& device, const ArrayOptions& options,
                                      unsigned levels) {
    return create_mipmapped(device, options, levels, nullptr);
}

MipmappedArray MipmappedArray::create(const Context& context, const ArrayOptions& options,
                                      unsigned levels) {
    const auto& box = detail::open_box_of(context, "MipmappedArray::create");
    return create_mipmapped(Device(box->ordinal), options, levels, box);
}

ArrayOptions MipmappedArray::level_options(unsigned level) const {
    open_box("MipmappedArray::level_options");
    if (level >= box()->levels)
        throw InvalidArgumentError("MipmappedArray::level_options: level " +
                                   std::to_string(level) + " is out of range; " + description() +
                                   " has levels 0 to " + std::to_string(box()->levels - 1));
    return level_of(box()->options, box()->shape, level);
}

CudaArray MipmappedArray::level(unsigned level) const {
    open_box("MipmappedArray::level");
    if (level >= box()->levels)
        throw InvalidArgumentError("MipmappedArray::level: level " + std::to_string(level) +
                                   " is out of range; " + description() + " has levels 0 to " +
                                   std::to_string(box()->levels - 1));
    auto view = std::make_shared<detail::ArrayBox>();
    view->options = level_of(box()->options, box()->shape, level);
    view->shape = box()->shape;
    view->element_size = cudacore::element_size(view->options.format, view->options.channels);
    view->ordinal = box()->ordinal;
    view->level = static_cast<int>(level);
    view->context = box()->context;
    view->parent = box();  // set first: a level view never destroys its handle
    {
        detail::ContextScope scope(*box()->context);
        detail::check(detail::driver().cuMipmappedArrayGetLevel(&view->handle, box()->handle, level),
                      "cuMipmappedArrayGetLevel",
                      [&] { return "level " + std::to_string(level) + " of " + description(); });
    }
    return detail::BoxAccess::make<CudaArray>(std::move(view));
}

const ArrayOptions& MipmappedArray::options() const noexcept {
    static const ArrayOptions none{};
    return box() ? box()->options : none;
}
unsigned MipmappedArray::levels() const noexcept { return box() ? box()->levels : 0; }
int MipmappedArray::device_ordinal() const noexcept { return box() ? box()->ordinal : -1; }

std::string MipmappedArray::description() const {
    if (!box()) return is_closed() ? closed_description() + " (closed)" : "moved-from MipmappedArray";
    return "mipmapped " + detail::describe_array(box()->options, box()->shape) + ", " +
           std::to_string(box()->levels) + " levels on device " + std::to_string(box()->ordinal);
}


void MipmappedArray::close() {
    if (box()) close_as(description());
}

}  // namespace cudacore
