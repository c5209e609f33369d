/// @file
/// GraphicsResource: an OpenGL buffer or image registered with CUDA, mapped and unmapped on a
/// stream, and reached while mapped as a Buffer or a CudaArray (cuda.core's GraphicsResource).
/// Guide: docs/graphics-interop.md.
///
///     GraphicsResource vbo = GraphicsResource::from_gl_buffer(device, gl_buffer);
///     vbo.map(stream);                     // GL's work on the buffer is done before the stream's
///     Buffer points = vbo.mapped_buffer(); // valid until unmap
///     launch(stream, config, kernel, points, n);
///     vbo.unmap(stream);                   // the stream's work is done before GL's next use
#pragma once

#include "cudacore/owning_handle.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"

#include <cuda.h>

#include <memory>
#include <string>

namespace cudacore {

class Device;
class Stream;

/// How CUDA will use a registered object, a hint the driver may use to avoid copies.
enum class GraphicsRegisterFlags : unsigned {
    none = CU_GRAPHICS_REGISTER_FLAGS_NONE,                   ///< CUDA reads and writes it
    read_only = CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY,         ///< CUDA only reads it
    write_discard = CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD, ///< CUDA overwrites all of it
};
/// "none", "read-only", "write-discard"; "GraphicsRegisterFlags(N)" for other values.
std::string to_string(GraphicsRegisterFlags flags);

/// How CUDA will use the object during one mapping.
enum class GraphicsMapFlags : unsigned {
    none = CU_GRAPHICS_MAP_RESOURCE_FLAGS_NONE,                   ///< read and written
    read_only = CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY,         ///< only read
    write_discard = CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD, ///< all of it overwritten
};
/// "none", "read-only", "write-discard"; "GraphicsMapFlags(N)" for other values.
std::string to_string(GraphicsMapFlags flags);

/// Options of GraphicsResource::from_gl_image.
struct GraphicsImageOptions {
    GraphicsRegisterFlags flags = GraphicsRegisterFlags::none;  ///< how CUDA will use it
    bool surface_load_store = false;  ///< the mapped array can back a SurfaceObject (surf2Dwrite)
    bool texture_gather = false;  ///< texture gather on the mapped array
};

/// The CU_GRAPHICS_REGISTER_FLAGS_ value for `flags` and `image`; InvalidArgumentError if bad.
unsigned graphics_register_flags(GraphicsRegisterFlags flags, const GraphicsImageOptions& image,
                                 const char* call);

/// "GL_TEXTURE_2D" and the like for the targets cuGraphicsGLRegisterImage takes; else empty.
std::string gl_image_target_name(unsigned gl_target);

/// An OpenGL object registered with CUDA, shared by its copies and unregistered when the last copy
/// and view go or at close() (drop it where the GL context is current). Thread-safe; map, work,
/// unmap is one sequence the caller orders. Registering, mapping and unmapping need a current GL
/// context (else InvalidArgumentError); members throw InvalidArgumentError when closed,
/// LoaderError without EGL or GLX, DriverError naming the call and resource.
class GraphicsResource {
public:
    /// Registers the GL buffer `gl_buffer` with `device`'s primary context, which it holds.
    static GraphicsResource from_gl_buffer(const Device& device, unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// from_gl_buffer with Device::current().
    static GraphicsResource from_gl_buffer(unsigned gl_buffer,
                                           GraphicsRegisterFlags flags = GraphicsRegisterFlags::none);
    /// Registers the GL texture or renderbuffer `gl_image` bound as `gl_target`.
    static GraphicsResource from_gl_image(const Device& device, unsigned gl_image,
                                          unsigned gl_target,
                                          const GraphicsImageOptions& options = {});
    /// from_gl_image with Device::current().
    static GraphicsResource from_gl_image(unsigned gl_image, unsigned gl_target,
                                          const GraphicsImageOptions& options = {});

    /// Maps the resource on `stream` (held until unmapped), after GL's earlier commands.
    void map(const Stream& stream, GraphicsMapFlags flags = GraphicsMapFlags::none) const;
    /// Unmaps on `stream`, before GL's later commands; views are invalid from then on.
    void unmap(const Stream& stream) const;
    void unmap() const;  ///< unmaps on the stream it was mapped on
    bool is_mapped() const noexcept;  ///< whether it is mapped now

    /// The mapped buffer as a Buffer that holds this resource, valid until unmap.
    Buffer mapped_buffer() const;
    /// Layer or face `array_index` at `mip_level` of the mapped image, valid until unmap.
    CudaArray mapped_array(unsigned array_index = 0, unsigned mip_level = 0) const;

    /// Unmaps and unregisters now, for every copy; DriverError when refused (closed anyway).
    void close();
    /// Drops this object's share, leaving it empty, as destruction does.
    void reset() noexcept { box_.reset(); }
    bool is_closed() const noexcept;  ///< true after close() and for a moved-from object

    CUgraphicsResource handle() const noexcept;  ///< the driver's handle (null once closed)
    /// The ordinal of the device it was registered with (-1 for a moved-from object).
    int device_ordinal() const noexcept;
    std::string description() const;  ///< "GL buffer 5 (write-discard) on device 0"

    /// Same registration.
    bool operator==(const GraphicsResource& other) const noexcept { return box_ == other.box_; }

private:
    friend struct detail::BoxAccess;
    explicit GraphicsResource(std::shared_ptr<detail::GraphicsResourceBox> box) noexcept;
    std::shared_ptr<detail::GraphicsResourceBox> box_;
};

}  // namespace cudacore
