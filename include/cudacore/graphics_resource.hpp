/// @file
/// GraphicsResource: an OpenGL buffer or image (texture, renderbuffer) registered with CUDA
/// (cuGraphicsGLRegisterBuffer / cuGraphicsGLRegisterImage), mapped and unmapped on a stream, and
/// reached while mapped as a Buffer or a CudaArray; cuda.core's GraphicsResource.
///
///     GraphicsResource vbo = GraphicsResource::from_gl_buffer(device, gl_buffer);
///     vbo.map(stream);                     // GL's work on the buffer is done before the stream's
///     Buffer points = vbo.mapped_buffer(); // valid until unmap
///     launch(stream, config, kernel, points, n);
///     vbo.unmap(stream);                   // the stream's work is done before GL's next use
///
/// The GL context that owns the object must be current on the calling thread for registering,
/// mapping and unmapping (the driver's rule): cudacore asks EGL and GLX which context is current
/// (libEGL.so.1, libGL.so.1 / libGLX.so.0, opened at run time; nothing links against them) and
/// throws InvalidArgumentError naming what it asked when none is. Neither library installed is a
/// LoaderError naming every path searched and CUDACORE_EGL_PATH / CUDACORE_GLX_PATH.
///
/// Mapping: while mapped, CUDA owns the object and GL must not touch it; map() orders the
/// stream's later work after the GL commands issued before it, unmap() orders GL's later commands
/// after the stream's work issued before it. The Buffer of mapped_buffer() and the CudaArray of
/// mapped_array() are views that own no memory and are VALID ONLY WHILE THE RESOURCE STAYS MAPPED:
/// after unmap() their address means nothing (the next map may place the object elsewhere), and
/// using them then is undefined, as with the driver. They hold the resource, so it is not
/// unregistered while they live.
///
/// Ownership: copies share one registration (copying is cheap); it is unregistered
/// (cuGraphicsUnregisterResource, after unmapping on the stream of the last map when still
/// mapped) when the last copy and the last view go, or at close(). A mapped resource holds the
/// Stream it was mapped on. Release happens on the thread that drops the last holder; the driver
/// wants the GL context current there too, so drop the last holder (or call close()) where it is:
/// a release the driver refuses is reported as a release_failed warning and left to the driver.
/// Destructors never throw; at exit, and after the driver shut down, release errors are ignored.
///
/// Thread safety: a GraphicsResource may be used from several threads (its state is guarded),
/// but mapping is per resource, not per thread: map, the work, and unmap form one sequence the
/// caller orders.
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
    /// Registers the GL buffer object `gl_buffer` (a GLuint) of the current GL context with
    /// `device`'s primary context (cuGraphicsGLRegisterBuffer); map it to use it as a Buffer.
    /// Throws InvalidArgumentError for buffer 0, flags that are not an enumerator, or no GL
    /// context current (naming the EGL / GLX calls asked); LoaderError when neither EGL nor GLX
    /// can be opened; NoDriverError without a driver; DriverError naming the call and the buffer
    /// when the driver refuses (CUDA_ERROR_INVALID_GRAPHICS_CONTEXT for a GL context on another
    /// GPU, CUDA_ERROR_INVALID_VALUE for a name that is no buffer) or, as CUDA_ERROR_NOT_SUPPORTED,
    /// has no OpenGL interop. Holds the primary context. Thread-safe.
    static GraphicsResource from_gl_buffer(const Device& device, unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// from_gl_buffer with the device of the calling thread's current CUDA context, or device 0
    /// when none is current (Device::current(), asked after the GL context check), as cuda.core's
    /// GraphicsResource.from_gl_buffer. Throws as the form with a device.
    static GraphicsResource from_gl_buffer(unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// Registers the GL texture or renderbuffer `gl_image` (a GLuint) bound as `gl_target` (a
    /// GLenum: GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, GL_TEXTURE_CUBE_MAP, GL_TEXTURE_3D,
    /// GL_TEXTURE_2D_ARRAY or GL_RENDERBUFFER) with `device`'s primary context
    /// (cuGraphicsGLRegisterImage); map it to use it as a CudaArray. Throws as from_gl_buffer,
    /// and InvalidArgumentError for a target not in that list. Thread-safe.
    static GraphicsResource from_gl_image(const Device& device, unsigned gl_image,
                                          unsigned gl_target,
                                          const GraphicsImageOptions& options = {});
    /// from_gl_image with Device::current(), as from_gl_buffer(gl_buffer, flags). Throws as the
    /// form with a device.
    static GraphicsResource from_gl_image(unsigned gl_image, unsigned gl_target,
                                          const GraphicsImageOptions& options = {});

    /// Maps the resource for CUDA on `stream` (cuGraphicsResourceSetMapFlags when `flags` differ
    /// from the last map's, then cuGraphicsMapResources): the stream's later work runs after the
    /// GL commands issued before. Holds `stream` until unmapped. Throws InvalidArgumentError when
    /// closed, already mapped, for flags that are not an enumerator, or with no GL context
    /// current; DriverError naming the call and the resource. Thread-safe.
    void map(const Stream& stream, GraphicsMapFlags flags = GraphicsMapFlags::none) const;
    /// Unmaps on `stream` (cuGraphicsUnmapResources): GL's later commands run after the stream's
    /// work issued before. Views from mapped_buffer() / mapped_array() are invalid from then on.
    /// Throws InvalidArgumentError when closed, not mapped or with no GL context current;
    /// DriverError naming the call and the resource. Thread-safe.
    void unmap(const Stream& stream) const;
    /// Unmaps on the stream it was mapped on; throws as unmap(stream).
    void unmap() const;
    /// Whether it is mapped now (false once closed). Never throws.
    bool is_mapped() const noexcept;

    /// The mapped buffer object as a Buffer of its whole size (cuGraphicsResourceGetMappedPointer):
    /// device memory of the resource's device that owns nothing, frees nothing and holds this
    /// resource; valid only until unmap (see the file comment). Throws InvalidArgumentError when
    /// closed, not mapped, or for an image (use mapped_array), DriverError naming the call.
    /// Thread-safe.
    Buffer mapped_buffer() const;
    /// Layer or cubemap face `array_index` at mipmap level `mip_level` of the mapped image as a
    /// CudaArray (cuGraphicsSubResourceGetMappedArray; format, size and channels read back with
    /// cuArray3DGetDescriptor; surface_load_store as registered), usable with array copies,
    /// TextureObject and SurfaceObject. The view destroys nothing and holds this resource; valid
    /// only until unmap. Throws InvalidArgumentError when closed, not mapped, or for a buffer
    /// (use mapped_buffer), DriverError naming the call, the index and the level. Thread-safe.
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
