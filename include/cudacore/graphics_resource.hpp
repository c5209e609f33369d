/// @file
/// GraphicsResource: an OpenGL buffer or image registered with CUDA, mapped and unmapped on a
/// stream, and reached while mapped as a Buffer or a CudaArray (cuda.core's GraphicsResource).
/// The GL context must be current for registering, mapping and unmapping (asked of EGL / GLX,
/// opened at run time). Views from mapped_buffer() / mapped_array() are valid only while mapped.
/// Copies share one registration, unregistered when the last copy and view go or at close(); drop
/// the last holder where the GL context is current. Destructors never throw. Usable from several
/// threads; map, work, unmap is one sequence the caller orders. Guide: docs/graphics-interop.md.
///
///     GraphicsResource vbo = GraphicsResource::from_gl_buffer(device, gl_buffer);
///     vbo.map(stream);                     // GL's work on the buffer is done before the stream's
///     Buffer points = vbo.mapped_buffer(); // valid until unmap
///     launch(stream, config, kernel, points, n);
///     vbo.unmap(stream);                   // the stream's work is done before GL's next use
#pragma once

#include "cudacore/forward.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"

#include <cuda.h>

#include <memory>
#include <string>

namespace cudacore {

class Device;
class Stream;

/// How CUDA will use a registered object (CU_GRAPHICS_REGISTER_FLAGS_*), a hint the driver may
/// use to avoid copies.
enum class GraphicsRegisterFlags : unsigned {
    none = CU_GRAPHICS_REGISTER_FLAGS_NONE,                   ///< CUDA reads and writes it
    read_only = CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY,         ///< CUDA only reads it
    write_discard = CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD, ///< CUDA overwrites all of it
};
/// "none", "read-only", "write-discard"; "GraphicsRegisterFlags(N)" for other values. Never throws
/// beyond std::bad_alloc.
std::string to_string(GraphicsRegisterFlags flags);

/// How CUDA will use the object during one mapping (CU_GRAPHICS_MAP_RESOURCE_FLAGS_*).
enum class GraphicsMapFlags : unsigned {
    none = CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE,                   ///< read and written
    read_only = CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY,         ///< only read
    write_discard = CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD, ///< all of it overwritten
};
/// "none", "read-only", "write-discard"; "GraphicsMapFlags(N)" for other values. Never throws
/// beyond std::bad_alloc.
std::string to_string(GraphicsMapFlags flags);

/// Options of GraphicsResource::from_gl_image.
struct GraphicsImageOptions {
    GraphicsRegisterFlags flags = GraphicsRegisterFlags::none;  ///< how CUDA will use it
    /// CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST: the mapped array can back a SurfaceObject
    /// (kernels write it with surf2Dwrite).
    bool surface_load_store = false;
    /// CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER: texture gather on the mapped array.
    bool texture_gather = false;
};

/// The CU_GRAPHICS_REGISTER_FLAGS_ value registering with `flags` and `image` asks for (the one
/// place they become driver flags). Throws InvalidArgumentError naming `call` for a value of
/// `flags` that is not one of the enumerators. Pure: thread-safe, no driver.
unsigned graphics_register_flags(GraphicsRegisterFlags flags, const GraphicsImageOptions& image,
                                 const char* call);

/// "GL_TEXTURE_2D" for the image targets cuGraphicsGLRegisterImage takes (GL_TEXTURE_2D,
/// GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D, GL_TEXTURE_2D_ARRAY,
/// GL_RENDERBUFFER); empty for any other value. Pure, never throws beyond std::bad_alloc.
std::string gl_image_target_name(unsigned gl_target);

/// An OpenGL object registered with CUDA, shared by its copies (see the file comment).
class GraphicsResource {
public:
    /// Registers the GL buffer object `gl_buffer` of the current GL context with `device`'s
    /// primary context (cuGraphicsGLRegisterBuffer), which it holds. Throws InvalidArgumentError
    /// for buffer 0, bad flags or no current GL context; LoaderError without EGL or GLX;
    /// NoDriverError; DriverError naming the call and buffer when the driver refuses.
    /// Thread-safe.
    static GraphicsResource from_gl_buffer(const Device& device, unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// from_gl_buffer with the device of the calling thread's current CUDA context, or device 0
    /// when none is current (Device::current(), asked after the GL context check), as cuda.core's
    /// GraphicsResource.from_gl_buffer. Throws as the form with a device.
    static GraphicsResource from_gl_buffer(unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// Registers the GL texture or renderbuffer `gl_image` bound as `gl_target` (GL_TEXTURE_2D,
    /// _RECTANGLE, _CUBE_MAP, _3D, _2D_ARRAY or GL_RENDERBUFFER) with `device`'s primary context
    /// (cuGraphicsGLRegisterImage). Throws as from_gl_buffer, and InvalidArgumentError for
    /// another target. Thread-safe.
    static GraphicsResource from_gl_image(const Device& device, unsigned gl_image,
                                          unsigned gl_target,
                                          const GraphicsImageOptions& options = {});
    /// from_gl_image with Device::current(), as from_gl_buffer(gl_buffer, flags). Throws as the
    /// form with a device.
    static GraphicsResource from_gl_image(unsigned gl_image, unsigned gl_target,
                                          const GraphicsImageOptions& options = {});

    /// Maps the resource for CUDA on `stream` (cuGraphicsMapResources): the stream's later work
    /// runs after GL's earlier commands. Holds `stream` until unmapped. Throws
    /// InvalidArgumentError when closed, already mapped, for bad flags or no GL context;
    /// DriverError naming the call and the resource. Thread-safe.
    void map(const Stream& stream, GraphicsMapFlags flags = GraphicsMapFlags::none) const;
    /// Unmaps on `stream`: GL's later commands run after the stream's earlier work; views are
    /// invalid from then on. Throws InvalidArgumentError when closed, not mapped or with no GL
    /// context; DriverError naming the call and the resource. Thread-safe.
    void unmap(const Stream& stream) const;
    /// Unmaps on the stream it was mapped on; throws as unmap(stream).
    void unmap() const;
    /// Whether it is mapped now (false once closed). Never throws.
    bool is_mapped() const noexcept;

    /// The mapped buffer object as a Buffer of its whole size that owns nothing and holds this
    /// resource; valid only until unmap. Throws InvalidArgumentError when closed, not mapped or
    /// an image; DriverError naming the call. Thread-safe.
    Buffer mapped_buffer() const;
    /// Layer or face `array_index` at level `mip_level` of the mapped image as a CudaArray that
    /// destroys nothing and holds this resource; valid only until unmap. Throws
    /// InvalidArgumentError when closed, not mapped or a buffer; DriverError naming the call, the
    /// index and the level. Thread-safe.
    CudaArray mapped_array(unsigned array_index = 0, unsigned mip_level = 0) const;

    /// Unmaps (on the stream of the map, when mapped) and unregisters now, for every copy
    /// (docs/errors-and-lifetime.md, "Closing and resetting"); views still held are invalid.
    /// DriverError naming the call when the driver refuses (closed anyway). Thread-safe.
    void close();
    /// Drops this object's share (as std::shared_ptr::reset does), leaving it empty; the
    /// registration goes with the last copy, as at destruction. Never throws.
    void reset() noexcept { box_.reset(); }
    /// True after close() and for a moved-from object. Never throws.
    bool is_closed() const noexcept;

    /// The driver's handle (null once closed).
    CUgraphicsResource handle() const noexcept;
    /// The ordinal of the device it was registered with (-1 for a moved-from object).
    int device_ordinal() const noexcept;
    /// "GL buffer 5 (write-discard) on device 0", "GL texture 3 (GL_TEXTURE_2D, surface
    /// load/store) on device 0". Never throws beyond std::bad_alloc.
    std::string description() const;

    /// Same registration.
    bool operator==(const GraphicsResource& other) const noexcept { return box_ == other.box_; }

private:
    friend struct detail::BoxAccess;
    explicit GraphicsResource(std::shared_ptr<detail::GraphicsResourceBox> box) noexcept;
    std::shared_ptr<detail::GraphicsResourceBox> box_;
};

}  // namespace cudacore
