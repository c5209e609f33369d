// A headless OpenGL context for tests, made through EGL with no window system: a display of an
// EGL device (EGL_EXT_platform_device over eglQueryDevicesEXT), else the default display; the
// OpenGL API; a pbuffer surface (or none, where EGL_KHR_surfaceless_context allows); made current
// on the creating thread. EGL and GL are opened at run time (libEGL.so.1; libOpenGL.so.0, then
// libGL.so.1, then eglGetProcAddress for GL functions): test binaries start without them.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <memory>
#include <string>

namespace cudacore::test {

// The GL functions the tests call (core OpenGL 1.5 / 3.0).
struct GlFunctions {
    decltype(&::glGetError) GetError = nullptr;
    decltype(&::glGetString) GetString = nullptr;
    decltype(&::glFinish) Finish = nullptr;
    decltype(&::glPixelStorei) PixelStorei = nullptr;
    PFNGLGENBUFFERSPROC GenBuffers = nullptr;
    PFNGLDELETEBUFFERSPROC DeleteBuffers = nullptr;
    PFNGLBINDBUFFERPROC BindBuffer = nullptr;
    PFNGLBUFFERDATAPROC BufferData = nullptr;
    PFNGLGETBUFFERSUBDATAPROC GetBufferSubData = nullptr;
    decltype(&::glGenTextures) GenTextures = nullptr;
    decltype(&::glDeleteTextures) DeleteTextures = nullptr;
    decltype(&::glBindTexture) BindTexture = nullptr;
    decltype(&::glTexParameteri) TexParameteri = nullptr;
    decltype(&::glTexImage2D) TexImage2D = nullptr;
    decltype(&::glGetTexImage) GetTexImage = nullptr;
};

class EglContext {
public:
    // A context current on this thread, or null with `why_not` saying what failed ("no EGL
    // display", "eglCreateContext failed: EGL_BAD_MATCH (0x3009)", "libEGL.so.1: ... not found").
    static std::unique_ptr<EglContext> create(std::string& why_not);
    // Makes no context current and destroys the context, the surface and the display's use.
    ~EglContext();
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;

    const GlFunctions& gl() const { return gl_; }
    // "NVIDIA Corporation / NVIDIA H100 .../PCIe/SSE2 (4.6.0 NVIDIA ...)", for skip messages.
    std::string renderer() const;
    // Makes no context current on this thread (the context stays), and current again.
    void release_current();
    void make_current();

    struct Egl;  // the EGL functions, opened at run time

private:
    EglContext() = default;
    std::unique_ptr<Egl> egl_;
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLSurface surface_ = EGL_NO_SURFACE;
    EGLContext context_ = EGL_NO_CONTEXT;
    GlFunctions gl_;
};

}  // namespace cudacore::test
