// OpenGL interop paths that need a fresh process (the GL libraries and the driver are looked for
// once per process):
//   missing-gl   with CUDACORE_EGL_PATH / CUDACORE_GLX_PATH at missing files: registering throws
//                LoaderError naming them; prints "from_gl_buffer: LoaderError: MESSAGE".
//   no-driver    with a GL context current (headless EGL) and no driver: registering throws
//                NoDriverError; prints "NAME: NoDriverError: ..." per call. Exits 77, printing
//                why, when EGL gives no context.
#include "egl_context.hpp"
#include "expect_no_driver.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/graphics_resource.hpp"

#include <cstdio>
#include <cstring>
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
    std::fprintf(stderr, "usage: gl_interop_probe missing-gl|no-driver\n");
    return 2;
}
