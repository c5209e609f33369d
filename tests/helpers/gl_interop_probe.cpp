// OpenGL interop paths that need a fresh process (the GL libraries and the driver are looked for
// once per process):
//   missing-gl   with CUDACORE_EGL_PATH / CUDACORE_GLX_PATH at missing files: registering throws
//                LoaderError naming them; prints "from_gl_buffer: LoaderError: MESSAGE".
//   no-driver    with a GL context current (headless EGL) and no driver: registering throws
//                NoDriverError; prints "NAME: NoDriverError: ..." per call. Exits 77, printing
//                why, when EGL gives no context.
//   exit-mapped  on a GPU: a GL buffer registered, mapped on a stream and written through its
//                view, all three held in static objects when main returns; the GL context lives
//                on in a static object made before them (so it outlives their release).
//   exit-after-gl the same, but the GL context is destroyed before main returns: the resource is
//                released at exit with no GL context at all.
//                Both print "mapped N bytes", and "warning: MESSAGE" for each warning cudacore
//                reports; exit 77, printing why, without a GPU or an OpenGL context.
#include "egl_context.hpp"
#include "expect_no_driver.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graphics_resource.hpp"
#include "cudacore/stream.hpp"
#include "cudacore/warnings.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

int main(int argc, char** argv) {
    using cudacore::GraphicsResource;
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "missing-gl") {
        try {
            GraphicsResource::from_gl_buffer(1);
            std::printf("from_gl_buffer: UNEXPECTED success\n");
            return 1;
        } catch (const cudacore::LoaderError& e) {
            std::printf("from_gl_buffer: LoaderError: %s\n", e.what());
            return 0;
        } catch (const std::exception& e) {
            std::printf("from_gl_buffer: UNEXPECTED %s\n", e.what());
            return 1;
        }
    }
    if (mode == "no-driver") {
        std::string why_not;
        auto context = cudacore::test::EglContext::create(why_not);
        if (!context) {
            std::printf("no GL context to test with: %s\n", why_not.c_str());
            return 77;
        }
        std::printf("GL context: %s\n", context->renderer().c_str());
        const auto probe = cudacore::test::expect_no_driver;
        probe("from_gl_buffer", [] { GraphicsResource::from_gl_buffer(1); });
        probe("from_gl_image", [] { GraphicsResource::from_gl_image(1, GL_TEXTURE_2D); });
        return 0;
    }
    if (mode == "exit-mapped" || mode == "exit-after-gl") {
        try {
            if (cudacore::Device::count() == 0) {
                std::printf("no GPU\n");
                return 77;
            }
        } catch (const cudacore::NoDriverError& e) {
            std::printf("no GPU: %s\n", e.what());
            return 77;
        }
        cudacore::set_warning_handler([](const cudacore::Warning& warning) {
            std::printf("warning: %s\n", warning.message.c_str());
        });
        std::string why_not;
        // Made first, so destroyed last: it outlives the objects below.
        static std::unique_ptr<cudacore::test::EglContext> gl =
            cudacore::test::EglContext::create(why_not);
        if (!gl) {
            std::printf("no GL context to test with: %s\n", why_not.c_str());
            return 77;
        }
        GLuint name = 0;
        gl->gl().GenBuffers(1, &name);
        gl->gl().BindBuffer(GL_ARRAY_BUFFER, name);
        gl->gl().BufferData(GL_ARRAY_BUFFER, 4096, nullptr, GL_DYNAMIC_DRAW);
        gl->gl().BindBuffer(GL_ARRAY_BUFFER, 0);
        const cudacore::Device device(0);
        static cudacore::Stream stream = device.create_stream();
        static GraphicsResource resource = GraphicsResource::from_gl_buffer(device, name);
        resource.map(stream);
        static cudacore::Buffer view = resource.mapped_buffer();
        view.fill_uint32(0x01020304u, stream);
        std::printf("mapped %zu bytes\n", view.size());
        std::fflush(stdout);
        if (mode == "exit-after-gl") gl.reset();  // the GL context goes before the resource
        return 0;
    }
    std::fprintf(stderr, "usage: gl_interop_probe missing-gl|no-driver|exit-mapped|exit-after-gl\n");
    return 2;
}
