#include "egl_context.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace cudacore::test {

struct EglContext::Egl {
    void* library = nullptr;
    decltype(&::eglGetProcAddress) GetProcAddress = nullptr;
    decltype(&::eglGetError) GetError = nullptr;
    decltype(&::eglQueryString) QueryString = nullptr;
    decltype(&::eglGetDisplay) GetDisplay = nullptr;
    decltype(&::eglInitialize) Initialize = nullptr;
    decltype(&::eglTerminate) Terminate = nullptr;
    decltype(&::eglBindAPI) BindAPI = nullptr;
    decltype(&::eglChooseConfig) ChooseConfig = nullptr;
    decltype(&::eglCreatePbufferSurface) CreatePbufferSurface = nullptr;
    decltype(&::eglDestroySurface) DestroySurface = nullptr;
    decltype(&::eglCreateContext) CreateContext = nullptr;
    decltype(&::eglDestroyContext) DestroyContext = nullptr;
    decltype(&::eglMakeCurrent) MakeCurrent = nullptr;
    PFNEGLQUERYDEVICESEXTPROC QueryDevicesEXT = nullptr;
    PFNEGLGETPLATFORMDISPLAYEXTPROC GetPlatformDisplayEXT = nullptr;
    PFNEGLQUERYDEVICESTRINGEXTPROC QueryDeviceStringEXT = nullptr;

    // "eglCreateContext failed: 0x3009".
    std::string failure(const char* call) const {
        char text[96];
        std::snprintf(text, sizeof text, "%s failed: EGL error 0x%04x", call,
                      GetError ? static_cast<unsigned>(GetError()) : 0u);
        return text;
    }
};

namespace {

bool has_extension(const char* list, const char* name) {
    if (!list) return false;
    const std::size_t length = std::strlen(name);
    for (const char* at = std::strstr(list, name); at; at = std::strstr(at + 1, name))
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0')) return true;
    return false;
}

// An initialised display: an EGL device's (first that initialises), else the default display.
EGLDisplay open_display(EglContext::Egl& egl, std::string& why_not) {
    const char* client = egl.QueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);  // null without any
    if (egl.QueryDevicesEXT && egl.GetPlatformDisplayEXT &&
        has_extension(client, "EGL_EXT_platform_device")) {
        EGLDeviceEXT devices[16];
        EGLint count = 0;
        if (egl.QueryDevicesEXT(16, devices, &count)) {
            // Hardware devices first: Mesa's software renderer cannot share memory with CUDA.
            for (bool software : {false, true}) {
                for (EGLint i = 0; i < count; ++i) {
                    const char* extensions = egl.QueryDeviceStringEXT
                                                 ? egl.QueryDeviceStringEXT(devices[i], EGL_EXTENSIONS)
                                                 : nullptr;
                    if (has_extension(extensions, "EGL_MESA_device_software") != software) continue;
                    EGLDisplay display =
                        egl.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
                    if (display != EGL_NO_DISPLAY && egl.Initialize(display, nullptr, nullptr))
                        return display;
                }
            }
        }
        why_not = "no EGL device display initialised (" + std::to_string(count) + " devices)";
    }
    EGLDisplay display = egl.GetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY) {
        why_not = "no EGL display (" + (why_not.empty() ? "no EGL_EXT_platform_device" : why_not) +
                  "; eglGetDisplay(EGL_DEFAULT_DISPLAY) gave none)";
        return EGL_NO_DISPLAY;
    }
    if (!egl.Initialize(display, nullptr, nullptr)) {
        why_not = "no EGL display: " + egl.failure("eglInitialize(EGL_DEFAULT_DISPLAY)");
        return EGL_NO_DISPLAY;
    }
    return display;
}

}  // namespace

std::unique_ptr<EglContext> EglContext::create(std::string& why_not) {
    std::unique_ptr<EglContext> made(new EglContext);
    made->egl_ = std::make_unique<Egl>();
    Egl& egl = *made->egl_;
    egl.library = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!egl.library) {
        const char* error = dlerror();
        why_not = std::string("no EGL: ") + (error ? error : "libEGL.so.1 does not load");
        return nullptr;
    }
#define CUDACORE_EGL(name)                                                          \
    egl.name = reinterpret_cast<decltype(egl.name)>(dlsym(egl.library, "egl" #name)); \
    if (!egl.name) {                                                                \
        why_not = "no EGL: libEGL.so.1 lacks egl" #name;                            \
        return nullptr;                                                             \
    }
    CUDACORE_EGL(GetProcAddress)
    CUDACORE_EGL(GetError)
    CUDACORE_EGL(QueryString)
    CUDACORE_EGL(GetDisplay)
    CUDACORE_EGL(Initialize)
    CUDACORE_EGL(Terminate)
    CUDACORE_EGL(BindAPI)
    CUDACORE_EGL(ChooseConfig)
    CUDACORE_EGL(CreatePbufferSurface)
    CUDACORE_EGL(DestroySurface)
    CUDACORE_EGL(CreateContext)
    CUDACORE_EGL(DestroyContext)
    CUDACORE_EGL(MakeCurrent)
#undef CUDACORE_EGL
    egl.QueryDevicesEXT =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(egl.GetProcAddress("eglQueryDevicesEXT"));
    egl.GetPlatformDisplayEXT = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
        egl.GetProcAddress("eglGetPlatformDisplayEXT"));
    egl.QueryDeviceStringEXT = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(
        egl.GetProcAddress("eglQueryDeviceStringEXT"));

    made->display_ = open_display(egl, why_not);
    if (made->display_ == EGL_NO_DISPLAY) return nullptr;
    if (!egl.BindAPI(EGL_OPENGL_API)) {
        why_not = "no desktop OpenGL through EGL: " + egl.failure("eglBindAPI(EGL_OPENGL_API)");
        return nullptr;
    }
    const EGLint pbuffer_attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                         EGL_OPENGL_BIT, EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8,
                                         EGL_BLUE_SIZE, 8, EGL_NONE};
    const EGLint any_attributes[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint configs = 0;
    const bool pbuffer =
        egl.ChooseConfig(made->display_, pbuffer_attributes, &config, 1, &configs) && configs > 0;
    if (pbuffer) {
        const EGLint size[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
        made->surface_ = egl.CreatePbufferSurface(made->display_, config, size);
        if (made->surface_ == EGL_NO_SURFACE) {
            why_not = egl.failure("eglCreatePbufferSurface");
            return nullptr;
        }
    } else {
        const char* extensions = egl.QueryString(made->display_, EGL_EXTENSIONS);
        if (!has_extension(extensions, "EGL_KHR_surfaceless_context") ||
            !egl.ChooseConfig(made->display_, any_attributes, &config, 1, &configs) ||
            configs == 0) {
            why_not = "no EGL config for OpenGL with a pbuffer, and no surfaceless context";
            return nullptr;
        }
    }
    made->context_ = egl.CreateContext(made->display_, config, EGL_NO_CONTEXT, nullptr);
    if (made->context_ == EGL_NO_CONTEXT) {
        why_not = "no EGL context: " + egl.failure("eglCreateContext");
        return nullptr;
    }
    if (!egl.MakeCurrent(made->display_, made->surface_, made->surface_, made->context_)) {
        why_not = egl.failure("eglMakeCurrent");
        return nullptr;
    }

    // GL functions: from the GL library (glvnd's dispatch), else through EGL.
    void* gl_library = dlopen("libOpenGL.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!gl_library) gl_library = dlopen("libGL.so.1", RTLD_NOW | RTLD_LOCAL);
    auto find = [&](const char* name) -> void* {
        void* function = gl_library ? dlsym(gl_library, name) : nullptr;
        return function ? function : reinterpret_cast<void*>(egl.GetProcAddress(name));
    };
    GlFunctions& gl = made->gl_;
#define CUDACORE_GL(name)                                                    \
    gl.name = reinterpret_cast<decltype(gl.name)>(find("gl" #name));         \
    if (!gl.name) {                                                          \
        why_not = "no OpenGL function gl" #name " (libOpenGL.so.0, libGL.so.1, " \
                  "eglGetProcAddress)";                                      \
        return nullptr;                                                      \
    }
    CUDACORE_GL(GetError)
    CUDACORE_GL(GetString)
    CUDACORE_GL(Finish)
    CUDACORE_GL(PixelStorei)
    CUDACORE_GL(GenBuffers)
    CUDACORE_GL(DeleteBuffers)
    CUDACORE_GL(BindBuffer)
    CUDACORE_GL(BufferData)
    CUDACORE_GL(GetBufferSubData)
    CUDACORE_GL(GenTextures)
    CUDACORE_GL(DeleteTextures)
    CUDACORE_GL(BindTexture)
    CUDACORE_GL(TexParameteri)
    CUDACORE_GL(TexImage2D)
    CUDACORE_GL(GetTexImage)
#undef CUDACORE_GL
    return made;
}

EglContext::~EglContext() {
    if (!egl_ || !egl_->library || display_ == EGL_NO_DISPLAY) return;
    egl_->MakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (context_ != EGL_NO_CONTEXT) egl_->DestroyContext(display_, context_);
    if (surface_ != EGL_NO_SURFACE) egl_->DestroySurface(display_, surface_);
    // The display is not terminated: other contexts of the process may share it (EGL displays
    // are per process), and terminating is not needed to free this context.
}

std::string EglContext::renderer() const {
    auto text = [&](GLenum name) {
        const GLubyte* value = gl_.GetString(name);
        return value ? std::string(reinterpret_cast<const char*>(value)) : std::string("?");
    };
    return text(GL_VENDOR) + " / " + text(GL_RENDERER) + " (" + text(GL_VERSION) + ")";
}

void EglContext::release_current() {
    egl_->MakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

void EglContext::make_current() { egl_->MakeCurrent(display_, surface_, surface_, context_); }

}  // namespace cudacore::test
