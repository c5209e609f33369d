// The box behind GraphicsResource: the registration, what it was made from (for messages and for
// the views), its context, and its mapping: the stream it was mapped on, held until unmapped so
// that a release can unmap there. Views (mapped Buffers and CudaArrays) hold the box, so the
// registration outlives them; the box unmaps and unregisters when the last holder goes.
#pragma once

#include "cudacore/graphics_resource.hpp"
#include "cudacore/stream.hpp"
#include "runtime/runtime_handles.hpp"

#include <cuda.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace cudacore::detail {

struct GraphicsResourceBox {
    CUgraphicsResource handle = nullptr;  // null once closed
    std::shared_ptr<ContextBox> context;
    int ordinal = 0;
    bool image = false;      // registered with cuGraphicsGLRegisterImage
    unsigned gl_name = 0;    // the GL buffer, texture or renderbuffer
    unsigned gl_target = 0;  // an image's target
    GraphicsRegisterFlags flags = GraphicsRegisterFlags::none;
    GraphicsImageOptions image_options;

    // Guards what follows (map, unmap, close and the views' look-ups).
    mutable std::mutex mutex;
    bool closed = false;
    std::optional<Stream> map_stream;  // set while mapped
    GraphicsMapFlags map_flags = GraphicsMapFlags::none;  // as last set on the driver

    GraphicsResourceBox() {}
    ~GraphicsResourceBox();
    GraphicsResourceBox(const GraphicsResourceBox&) = delete;
    GraphicsResourceBox& operator=(const GraphicsResourceBox&) = delete;

    // "GL buffer 5 (write-discard) on device 0".
    std::string describe() const;
};

}  // namespace cudacore::detail
