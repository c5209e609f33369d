#include "cudacore/graphics_resource.hpp"

#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "errors/release_report.hpp"
#include "interop/graphics_resource_box.hpp"
#include "loader/driver_api.hpp"
#include "loader/gl_context_query.hpp"
#include "memory/buffer_box.hpp"
#include "runtime/release/release.hpp"
#include "support/box_access.hpp"
#include "views/array_box.hpp"

#include <type_traits>

// driver_api.hpp writes these out to keep GL/gl.h out of the driver table: they must stay exact
// (checked where GL/gl.h is installed, as scripts/setup.sh does; the build does not need it).
#if __has_include(<GL/gl.h>)
#include <cudaGLTypedefs.h>
static_assert(std::is_same_v<PFN_cuGraphicsGLRegisterBuffer_v3000,
                             CUresult(CUDAAPI*)(CUgraphicsResource*, GLuint, unsigned int)>);
static_assert(std::is_same_v<PFN_cuGraphicsGLRegisterImage_v3000,
                             CUresult(CUDAAPI*)(CUgraphicsResource*, GLuint, GLenum, unsigned int)>);
#endif

namespace cudacore {

namespace {

// The GL enums of cuGraphicsGLRegisterImage's targets (GL/gl.h and GL/glext.h values).
struct ImageTarget {
    unsigned value;
    const char* name;
};
constexpr ImageTarget kImageTargets[] = {
    {0x0DE1, "GL_TEXTURE_2D"},        {0x84F5, "GL_TEXTURE_RECTANGLE"},
    {0x8513, "GL_TEXTURE_CUBE_MAP"},  {0x806F, "GL_TEXTURE_3D"},
    {0x8C1A, "GL_TEXTURE_2D_ARRAY"},  {0x8D41, "GL_RENDERBUFFER"},
};
constexpr unsigned kRenderbuffer = 0x8D41;

const char* flags_name(unsigned value) {
    switch (value) {
        case 0: return "none";
        case 1: return "read-only";
        case 2: return "write-discard";
        default: return nullptr;
    }
}

unsigned map_flags(GraphicsMapFlags flags, const char* call) {
    const unsigned value = static_cast<unsigned>(flags);
    if (!flags_name(value))
        throw InvalidArgumentError(std::string(call) + ": GraphicsMapFlags value " +
                                   std::to_string(value) +
                                   " is none of none, read_only, write_discard");
    return value;
}

// InvalidArgumentError unless a GL context is current on this thread (LoaderError without EGL
// and GLX): the driver's own answer would be a bare CUDA_ERROR_INVALID_GRAPHICS_CONTEXT.
void require_gl_context(const char* call, const std::string& object) {
    const detail::GlContextQuery& query = detail::gl_context_query();
    if (!detail::current_gl_context(query).empty()) return;
    throw InvalidArgumentError(std::string(call) + ": no OpenGL context is current on this thread (" +
                               detail::describe_gl_context_query(query) + ") [" + object +
                               "]; make the GL context that owns it current first (the driver "
                               "would fail with CUDA_ERROR_INVALID_GRAPHICS_CONTEXT)");
}

// The driver, with its graphics entry points (a driver may lack OpenGL interop).
const detail::DriverApi& graphics_driver(bool registering) {
    const detail::DriverApi& api = detail::driver();
    const char* missing = !api.cuGraphicsMapResources           ? "cuGraphicsMapResources"
                          : !api.cuGraphicsUnmapResources        ? "cuGraphicsUnmapResources"
                          : !api.cuGraphicsUnregisterResource    ? "cuGraphicsUnregisterResource"
                          : !api.cuGraphicsResourceSetMapFlags   ? "cuGraphicsResourceSetMapFlags"
                          : !api.cuGraphicsResourceGetMappedPointer
                              ? "cuGraphicsResourceGetMappedPointer"
                          : !api.cuGraphicsSubResourceGetMappedArray
                              ? "cuGraphicsSubResourceGetMappedArray"
                          : registering && !api.cuGraphicsGLRegisterBuffer ? "cuGraphicsGLRegisterBuffer"
                          : registering && !api.cuGraphicsGLRegisterImage  ? "cuGraphicsGLRegisterImage"
                                                                           : nullptr;
    if (missing)
        throw DriverError(CUDA_ERROR_NOT_SUPPORTED, std::string("cuGetProcAddress(") + missing + ")",
                          "the driver at " + api.path + " has no OpenGL interop");
    return api;
}

detail::GraphicsResourceBox& open_box(const std::shared_ptr<detail::GraphicsResourceBox>& box,
                                      const char* call) {
    if (!box) throw InvalidArgumentError(std::string(call) + ": moved-from GraphicsResource");
    return *box;
}

// Under the box's lock: refuses a closed resource, and one not mapped when `mapped` is asked.
void require_state(const detail::GraphicsResourceBox& box, const char* call, bool mapped) {
    if (box.closed)
        throw InvalidArgumentError(std::string(call) + ": " + box.describe() + " is closed");
    if (mapped && !box.map_stream)
        throw InvalidArgumentError(std::string(call) + ": " + box.describe() +
                                   " is not mapped; call map(stream) first (views are valid only "
                                   "between map and unmap)");
}

void require_open_stream(const Stream& stream, const char* call, const std::string& object) {
    if (stream.is_closed())
        throw InvalidArgumentError(std::string(call) + ": the stream is closed [" + object + "]");
}

// Unmaps (when mapped) and unregisters `handle` in `context`, reporting each failure through
// `fail(status, call)` (a throw for close(), a warning for the destructor).
template <class Fail>
void unmap_and_unregister(const detail::DriverApi& api, const detail::ContextBox& context,
                          CUgraphicsResource handle, const std::optional<Stream>& map_stream,
                          Fail&& fail) {
    detail::ContextScope scope(context);
    CUresult unmapped = CUDA_SUCCESS;
    if (map_stream) unmapped = api.cuGraphicsUnmapResources(1, &handle, map_stream->handle());
    const CUresult unregistered = api.cuGraphicsUnregisterResource(handle);
    if (unmapped != CUDA_SUCCESS) fail(unmapped, "cuGraphicsUnmapResources");
    if (unregistered != CUDA_SUCCESS) fail(unregistered, "cuGraphicsUnregisterResource");
}

GraphicsResource register_gl(std::optional<Device> device, bool image, unsigned name,
                             unsigned target, GraphicsRegisterFlags flags,
                             const GraphicsImageOptions& options, const char* call) {
    const char* kind = !image ? "buffer" : target == kRenderbuffer ? "renderbuffer" : "texture";
    if (name == 0)
        throw InvalidArgumentError(std::string(call) + ": GL " + kind +
                                   " name 0 names no object (use a name from glGen*)");
    if (image && gl_image_target_name(target).empty())
        throw InvalidArgumentError(std::string(call) + ": GL target " + std::to_string(target) +
                                   " of GL image " + std::to_string(name) +
                                   " is none that cuGraphicsGLRegisterImage takes "
                                   "(GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, "
                                   "GL_TEXTURE_3D, GL_TEXTURE_2D_ARRAY, GL_RENDERBUFFER)");
    const GraphicsImageOptions image_options = image ? options : GraphicsImageOptions{flags};
    const unsigned driver_flags = graphics_register_flags(flags, image_options, call);

    auto box = std::make_shared<detail::GraphicsResourceBox>();
    box->image = image;
    box->gl_name = name;
    box->gl_target = target;
    box->flags = flags;
    box->image_options = image_options;
    box->ordinal = device ? device->ordinal() : -1;
    require_gl_context(call, box->describe());
    const detail::DriverApi& api = graphics_driver(true);
    if (!device) device = Device::current();
    box->ordinal = device->ordinal();
    detail::with_primary_context(box->ordinal, [&](std::shared_ptr<detail::ContextBox>& context) {
        detail::ContextScope scope(*context);
        const CUresult status =
            image ? api.cuGraphicsGLRegisterImage(&box->handle, name, target, driver_flags)
                  : api.cuGraphicsGLRegisterBuffer(&box->handle, name, driver_flags);
        detail::check(status, image ? "cuGraphicsGLRegisterImage" : "cuGraphicsGLRegisterBuffer",
                      [&] { return box->describe(); });
        box->context = context;
        return 0;
    });
    return detail::BoxAccess::make<GraphicsResource>(std::move(box));
}

}  // namespace

std::string to_string(GraphicsRegisterFlags flags) {
    const unsigned value = static_cast<unsigned>(flags);
    if (const char* name = flags_name(value)) return name;
    return "GraphicsRegisterFlags(" + std::to_string(value) + ")";
}

std::string to_string(GraphicsMapFlags flags) {
    const unsigned value = static_cast<unsigned>(flags);
    if (const char* name = flags_name(value)) return name;
    return "GraphicsMapFlags(" + std::to_string(value) + ")";
}

unsigned graphics_register_flags(GraphicsRegisterFlags flags, const GraphicsImageOptions& image,
                                 const char* call) {
    const unsigned value = static_cast<unsigned>(flags);
    if (!flags_name(value))
        throw InvalidArgumentError(std::string(call) + ": GraphicsRegisterFlags value " +
                                   std::to_string(value) +
                                   " is none of none, read_only, write_discard");
    unsigned driver_flags = value;
    if (image.surface_load_store) driver_flags |= CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST;
    if (image.texture_gather) driver_flags |= CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER;
    return driver_flags;
}

std::string gl_image_target_name(unsigned gl_target) {
    for (const ImageTarget& target : kImageTargets)
        if (target.value == gl_target) return target.name;
    return {};
}

namespace detail {

std::string GraphicsResourceBox::describe() const {
    std::string text = "GL ";
    text += !image ? "buffer" : gl_target == kRenderbuffer ? "renderbuffer" : "texture";
    text += " " + std::to_string(gl_name) + " (";
    if (image && gl_target != kRenderbuffer) text += gl_image_target_name(gl_target) + ", ";
    text += to_string(flags);
    if (image_options.surface_load_store) text += ", surface load/store";
    if (image_options.texture_gather) text += ", texture gather";
    text += ")";
    if (ordinal >= 0) text += " on device " + std::to_string(ordinal);
    return text;
}

GraphicsResourceBox::~GraphicsResourceBox() {
    if (!handle || !context) return;
    const DriverApi* api = driver_for_release(*context);
    if (!api) return;  // gone with the driver or a device reset
    try {
        unmap_and_unregister(*api, *context, handle, map_stream, [&](CUresult status,
                                                                     const char* call) {
            check_release(status, call, [&] { return describe(); });
        });
    } catch (...) {
        // A context that cannot be made current: left to the driver.
    }
}

}  // namespace detail

GraphicsResource::GraphicsResource(std::shared_ptr<detail::GraphicsResourceBox> box) noexcept
    : box_(std::move(box)) {}

GraphicsResource GraphicsResource::from_gl_buffer(unsigned gl_buffer, GraphicsRegisterFlags flags) {
    return register_gl(std::nullopt, false, gl_buffer, 0, flags, {},
                       "GraphicsResource::from_gl_buffer");
}

GraphicsResource GraphicsResource::from_gl_buffer(const Device& device, unsigned gl_buffer,
                                                  GraphicsRegisterFlags flags) {
    return register_gl(device, false, gl_buffer, 0, flags, {}, "GraphicsResource::from_gl_buffer");
}

GraphicsResource GraphicsResource::from_gl_image(unsigned gl_image, unsigned gl_target,
                                                 const GraphicsImageOptions& options) {
    return register_gl(std::nullopt, true, gl_image, gl_target, options.flags, options,
                       "GraphicsResource::from_gl_image");
}

GraphicsResource GraphicsResource::from_gl_image(const Device& device, unsigned gl_image,
                                                 unsigned gl_target,
                                                 const GraphicsImageOptions& options) {
    return register_gl(device, true, gl_image, gl_target, options.flags, options,
                       "GraphicsResource::from_gl_image");
}

void GraphicsResource::map(const Stream& stream, GraphicsMapFlags flags) const {
    constexpr const char* call = "GraphicsResource::map";
    detail::GraphicsResourceBox& box = open_box(box_, call);
    const unsigned driver_flags = map_flags(flags, call);
    std::lock_guard lock(box.mutex);
    require_state(box, call, false);
    if (box.map_stream)
        throw InvalidArgumentError(std::string(call) + ": " + box.describe() +
                                   " is already mapped; unmap it first");
    require_open_stream(stream, call, box.describe());
    require_gl_context(call, box.describe());
    const detail::DriverApi& api = graphics_driver(false);
    detail::ContextScope scope(*box.context);
    if (flags != box.map_flags) {
        detail::check(api.cuGraphicsResourceSetMapFlags(box.handle, driver_flags),
                      "cuGraphicsResourceSetMapFlags",
                      [&] { return box.describe() + ", map flags " + to_string(flags); });
        box.map_flags = flags;
    }
    CUgraphicsResource handle = box.handle;
    detail::check(api.cuGraphicsMapResources(1, &handle, stream.handle()), "cuGraphicsMapResources",
                  [&] { return box.describe(); });
    // An object of its own over the stream's box: closing the caller's Stream leaves this hold
    // (the unmap at close() or release needs the stream).
    box.map_stream = detail::BoxAccess::make<Stream>(detail::box_of(stream));
}

void GraphicsResource::unmap(const Stream& stream) const {
    constexpr const char* call = "GraphicsResource::unmap";
    detail::GraphicsResourceBox& box = open_box(box_, call);
    std::lock_guard lock(box.mutex);
    require_state(box, call, true);
    require_open_stream(stream, call, box.describe());
    require_gl_context(call, box.describe());
    const detail::DriverApi& api = graphics_driver(false);
    detail::ContextScope scope(*box.context);
    CUgraphicsResource handle = box.handle;
    detail::check(api.cuGraphicsUnmapResources(1, &handle, stream.handle()),
                  "cuGraphicsUnmapResources", [&] { return box.describe(); });
    box.map_stream.reset();
}

void GraphicsResource::unmap() const {
    std::optional<Stream> stream;
    {
        detail::GraphicsResourceBox& box = open_box(box_, "GraphicsResource::unmap");
        std::lock_guard lock(box.mutex);
        require_state(box, "GraphicsResource::unmap", true);
        stream = box.map_stream;
    }
    unmap(*stream);
}

bool GraphicsResource::is_mapped() const noexcept {
    if (!box_) return false;
    std::lock_guard lock(box_->mutex);
    return !box_->closed && box_->map_stream.has_value();
}

Buffer GraphicsResource::mapped_buffer() const {
    constexpr const char* call = "GraphicsResource::mapped_buffer";
    detail::GraphicsResourceBox& box = open_box(box_, call);
    std::lock_guard lock(box.mutex);
    require_state(box, call, true);
    if (box.image)
        throw InvalidArgumentError(std::string(call) + ": " + box.describe() +
                                   " is an image, which maps as an array: use mapped_array()");
    const detail::DriverApi& api = graphics_driver(false);
    CUdeviceptr address = 0;
    std::size_t size = 0;
    {
        detail::ContextScope scope(*box.context);
        detail::check(api.cuGraphicsResourceGetMappedPointer(&address, &size, box.handle),
                      "cuGraphicsResourceGetMappedPointer", [&] { return box.describe(); });
    }
    detail::BufferBoxPtr view;
    view->handle = address;
    view->size = size;
    view->owned = false;  // GL owns the memory: the view frees nothing
    view->device_ordinal = box.ordinal;
    view->device_accessible = true;
    view->host_accessible = false;
    view->foreign = std::make_unique<detail::BufferBox::Foreign>();
    view->foreign->anchor = box_;  // the registration outlives the view
    return detail::make_buffer(view);
}

CudaArray GraphicsResource::mapped_array(unsigned array_index, unsigned mip_level) const {
    constexpr const char* call = "GraphicsResource::mapped_array";
    detail::GraphicsResourceBox& box = open_box(box_, call);
    std::lock_guard lock(box.mutex);
    require_state(box, call, true);
    if (!box.image)
        throw InvalidArgumentError(std::string(call) + ": " + box.describe() +
                                   " is a buffer, which maps as memory: use mapped_buffer()");
    const detail::DriverApi& api = graphics_driver(false);
    auto describe = [&] {
        return "array index " + std::to_string(array_index) + ", mipmap level " +
               std::to_string(mip_level) + " of " + box.describe();
    };
    CUarray array = nullptr;
    CUDA_ARRAY3D_DESCRIPTOR descriptor{};
    {
        detail::ContextScope scope(*box.context);
        detail::check(api.cuGraphicsSubResourceGetMappedArray(&array, box.handle, array_index,
                                                              mip_level),
                      "cuGraphicsSubResourceGetMappedArray", describe);
        detail::check(api.cuArray3DGetDescriptor(&descriptor, array), "cuArray3DGetDescriptor",
                      describe);
    }
    detail::start_deferred_releases();  // the view's release may wait for copies
    auto view = std::make_shared<detail::ArrayBox>();
    view->owner = box_;  // set first: the view never destroys the array, GL owns it
    view->handle = array;
    view->context = box.context;
    view->ordinal = box.ordinal;
    ArrayOptions& options = view->options;
    options.format = static_cast<ArrayFormat>(descriptor.Format);
    options.channels = descriptor.NumChannels;
    options.width = descriptor.Width;
    options.height = descriptor.Height;
    options.depth = descriptor.Depth;
    options.layered = (descriptor.Flags & CUDA_ARRAY3D_LAYERED) != 0;
    options.cubemap = (descriptor.Flags & CUDA_ARRAY3D_CUBEMAP) != 0;
    options.surface_load_store = (descriptor.Flags & CUDA_ARRAY3D_SURFACE_LDST) != 0 ||
                                 box.image_options.surface_load_store;
    options.texture_gather = (descriptor.Flags & CUDA_ARRAY3D_TEXTURE_GATHER) != 0 ||
                             box.image_options.texture_gather;
    view->shape = array_shape(options, call);
    view->element_size = is_known(options.format)
                             ? cudacore::element_size(options.format, options.channels)
                             : 0;
    return detail::BoxAccess::make<CudaArray>(std::move(view));
}

void GraphicsResource::close() {
    if (!box_) return;
    detail::GraphicsResourceBox& box = *box_;
    CUgraphicsResource handle;
    std::optional<Stream> map_stream;
    {
        std::lock_guard lock(box.mutex);
        if (box.closed) return;
        box.closed = true;
        handle = std::exchange(box.handle, nullptr);
        map_stream = std::exchange(box.map_stream, std::nullopt);
    }
    if (!handle || !box.context) return;
    const detail::DriverApi* api = detail::driver_for_release(*box.context);
    if (!api) return;  // gone with the driver or a device reset
    unmap_and_unregister(*api, *box.context, handle, map_stream,
                         [&](CUresult status, const char* call) {
                             detail::throw_driver_error(status, call, box.describe());
                         });
}

bool GraphicsResource::is_closed() const noexcept {
    if (!box_) return true;
    std::lock_guard lock(box_->mutex);
    return box_->closed;
}

CUgraphicsResource GraphicsResource::handle() const noexcept {
    if (!box_) return nullptr;
    std::lock_guard lock(box_->mutex);
    return box_->handle;
}

int GraphicsResource::device_ordinal() const noexcept { return box_ ? box_->ordinal : -1; }

std::string GraphicsResource::description() const {
    if (!box_) return "moved-from GraphicsResource";
    return box_->describe() + (is_closed() ? " (closed)" : "");
}

}  // namespace cudacore
