// OpenGL interop without a window: the program makes its own headless OpenGL context through EGL
// (a display of the EGL device that is the CUDA device, the desktop OpenGL API, a small pbuffer
// surface), creates a GL buffer and a GL texture, registers both with CUDA as GraphicsResources
// and writes them from kernels: the buffer through its mapped Buffer, the texture through a
// SurfaceObject over its mapped array. GL then reads them back (glGetBufferSubData,
// glGetTexImage) and the values are checked.
//
// EGL and GL are opened at run time (libEGL.so.1; every function through eglGetProcAddress), so
// the program starts, and says why it skips, on a machine without them. A program sure to have
// them may link them instead (CMake: find_package(OpenGL COMPONENTS OpenGL EGL), the targets
// OpenGL::EGL and OpenGL::OpenGL) and call eglInitialize, glGenBuffers, ... directly.
#include <cudacore/cudacore.hpp>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void fill_buffer(unsigned* values, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] = 3u * i + 1u;
}
// An RGBA8 texture's array holds uchar4 texels; surf2Dwrite takes x in bytes.
extern "C" __global__ void fill_image(cudaSurfaceObject_t image, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        surf2Dwrite(make_uchar4(x, y, x ^ y, 255), image, x * 4, y);
}
)";

// ---- A headless OpenGL context through EGL --------------------------------------------------

static void* egl_library = nullptr;
static decltype(&eglGetProcAddress) get_proc_address = nullptr;
static std::string missing;  // functions not found, for the skip message

// An EGL or OpenGL function by name: libEGL's own exports, else eglGetProcAddress (EGL 1.5 gives
// every EGL and OpenGL function through it; extensions only through it).
template <class Function>
static Function load(const char* name, bool required = true) {
    void* function = dlsym(egl_library, name);
    if (!function) function = reinterpret_cast<void*>(get_proc_address(name));
    if (!function && required) missing += std::string(missing.empty() ? "" : ", ") + name;
    return reinterpret_cast<Function>(function);
}

struct Egl {
    decltype(&eglGetError) GetError = load<decltype(&eglGetError)>("eglGetError");
    decltype(&eglQueryString) QueryString = load<decltype(&eglQueryString)>("eglQueryString");
    decltype(&eglGetDisplay) GetDisplay = load<decltype(&eglGetDisplay)>("eglGetDisplay");
    decltype(&eglInitialize) Initialize = load<decltype(&eglInitialize)>("eglInitialize");
    decltype(&eglBindAPI) BindAPI = load<decltype(&eglBindAPI)>("eglBindAPI");
    decltype(&eglChooseConfig) ChooseConfig = load<decltype(&eglChooseConfig)>("eglChooseConfig");
    decltype(&eglCreatePbufferSurface) CreatePbufferSurface =
        load<decltype(&eglCreatePbufferSurface)>("eglCreatePbufferSurface");
    decltype(&eglDestroySurface) DestroySurface =
        load<decltype(&eglDestroySurface)>("eglDestroySurface");
    decltype(&eglCreateContext) CreateContext =
        load<decltype(&eglCreateContext)>("eglCreateContext");
    decltype(&eglDestroyContext) DestroyContext =
        load<decltype(&eglDestroyContext)>("eglDestroyContext");
    decltype(&eglMakeCurrent) MakeCurrent = load<decltype(&eglMakeCurrent)>("eglMakeCurrent");
    // EGL_EXT_device_enumeration, EGL_EXT_platform_device, EGL_EXT_device_query: optional, the
    // default display serves without them.
    PFNEGLQUERYDEVICESEXTPROC QueryDevicesEXT =
        load<PFNEGLQUERYDEVICESEXTPROC>("eglQueryDevicesEXT", false);
    PFNEGLGETPLATFORMDISPLAYEXTPROC GetPlatformDisplayEXT =
        load<PFNEGLGETPLATFORMDISPLAYEXTPROC>("eglGetPlatformDisplayEXT", false);
    PFNEGLQUERYDEVICEATTRIBEXTPROC QueryDeviceAttribEXT =
        load<PFNEGLQUERYDEVICEATTRIBEXTPROC>("eglQueryDeviceAttribEXT", false);
};

// The GL calls of this program (OpenGL 1.5 and later come through the loader, not from gl.h).
struct Gl {
    decltype(&glGetError) GetError = load<decltype(&glGetError)>("glGetError");
    decltype(&glGetString) GetString = load<decltype(&glGetString)>("glGetString");
    PFNGLGENBUFFERSPROC GenBuffers = load<PFNGLGENBUFFERSPROC>("glGenBuffers");
    PFNGLDELETEBUFFERSPROC DeleteBuffers = load<PFNGLDELETEBUFFERSPROC>("glDeleteBuffers");
    PFNGLBINDBUFFERPROC BindBuffer = load<PFNGLBINDBUFFERPROC>("glBindBuffer");
    PFNGLBUFFERDATAPROC BufferData = load<PFNGLBUFFERDATAPROC>("glBufferData");
    PFNGLGETBUFFERSUBDATAPROC GetBufferSubData =
        load<PFNGLGETBUFFERSUBDATAPROC>("glGetBufferSubData");
    decltype(&glGenTextures) GenTextures = load<decltype(&glGenTextures)>("glGenTextures");
    decltype(&glDeleteTextures) DeleteTextures =
        load<decltype(&glDeleteTextures)>("glDeleteTextures");
    decltype(&glBindTexture) BindTexture = load<decltype(&glBindTexture)>("glBindTexture");
    decltype(&glTexParameteri) TexParameteri =
        load<decltype(&glTexParameteri)>("glTexParameteri");
    decltype(&glTexImage2D) TexImage2D = load<decltype(&glTexImage2D)>("glTexImage2D");
    decltype(&glPixelStorei) PixelStorei = load<decltype(&glPixelStorei)>("glPixelStorei");
    decltype(&glGetTexImage) GetTexImage = load<decltype(&glGetTexImage)>("glGetTexImage");
};

static bool has_extension(const char* list, const char* name) {
    const std::size_t length = std::strlen(name);
    for (const char* at = list ? std::strstr(list, name) : nullptr; at; at = std::strstr(at + 1, name))
        if ((at == list || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0')) return true;
    return false;
}

// An initialised display on the EGL device that is `cuda_device` (EGL_NV_device_cuda names it),
// else on the first device that initialises, else the default display. CUDA shares memory only
// with a GL context on the same GPU.
static EGLDisplay open_display(const Egl& egl, CUdevice cuda_device) {
    const char* client_extensions = egl.QueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (egl.QueryDevicesEXT && egl.GetPlatformDisplayEXT &&
        has_extension(client_extensions, "EGL_EXT_platform_device")) {
        EGLDeviceEXT devices[16];
        EGLint count = 0;
        if (egl.QueryDevicesEXT(16, devices, &count)) {
            for (bool any : {false, true})
                for (EGLint i = 0; i < count; ++i) {
                    EGLAttrib its_cuda_device = -1;
                    const bool is_cuda_device =
                        egl.QueryDeviceAttribEXT &&
                        egl.QueryDeviceAttribEXT(devices[i], EGL_CUDA_DEVICE_NV,
                                                 &its_cuda_device) &&
                        its_cuda_device == cuda_device;
                    if (!any && !is_cuda_device) continue;
                    EGLDisplay display =
                        egl.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
                    if (display != EGL_NO_DISPLAY && egl.Initialize(display, nullptr, nullptr))
                        return display;
                }
        }
    }
    EGLDisplay display = egl.GetDisplay(EGL_DEFAULT_DISPLAY);
    if (display != EGL_NO_DISPLAY && egl.Initialize(display, nullptr, nullptr)) return display;
    return EGL_NO_DISPLAY;
}

// A desktop OpenGL context with a 16 x 16 pbuffer surface, current on this thread while it lives.
struct HeadlessContext {
    Egl egl;
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLSurface surface = EGL_NO_SURFACE;
    EGLContext context = EGL_NO_CONTEXT;

    // Empty when the context is current, else why there is none.
    std::string open(CUdevice cuda_device) {
        char failure[80];
        auto failed = [&](const char* call) {
            std::snprintf(failure, sizeof failure, "%s failed (EGL error 0x%04x)", call,
                          unsigned(egl.GetError()));
            return std::string(failure);
        };
        display = open_display(egl, cuda_device);
        if (display == EGL_NO_DISPLAY) return "no EGL display initialises";
        if (!egl.BindAPI(EGL_OPENGL_API)) return failed("eglBindAPI(EGL_OPENGL_API)");
        const EGLint wanted[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                 EGL_OPENGL_BIT, EGL_NONE};
        EGLConfig config = nullptr;
        EGLint configs = 0;
        if (!egl.ChooseConfig(display, wanted, &config, 1, &configs) || configs == 0)
            return "no EGL config with a pbuffer for desktop OpenGL";
        const EGLint size[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
        surface = egl.CreatePbufferSurface(display, config, size);
        if (surface == EGL_NO_SURFACE) return failed("eglCreatePbufferSurface");
        context = egl.CreateContext(display, config, EGL_NO_CONTEXT, nullptr);
        if (context == EGL_NO_CONTEXT) return failed("eglCreateContext");
        if (!egl.MakeCurrent(display, surface, surface, context)) return failed("eglMakeCurrent");
        return {};
    }
    ~HeadlessContext() {
        if (display == EGL_NO_DISPLAY) return;
        egl.MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (context != EGL_NO_CONTEXT) egl.DestroyContext(display, context);
        if (surface != EGL_NO_SURFACE) egl.DestroySurface(display, surface);
    }
};

// ---- The interop ----------------------------------------------------------------------------

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    egl_library = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!egl_library) {
        std::printf("skipped: no EGL (%s)\n", dlerror());
        return 0;
    }
    get_proc_address =
        reinterpret_cast<decltype(&eglGetProcAddress)>(dlsym(egl_library, "eglGetProcAddress"));
    if (!get_proc_address) {
        std::printf("skipped: libEGL.so.1 lacks eglGetProcAddress\n");
        return 0;
    }
    Device device(0);
    HeadlessContext headless;
    if (!missing.empty()) {
        std::printf("skipped: libEGL.so.1 lacks %s\n", missing.c_str());
        return 0;
    }
    if (std::string why_not = headless.open(device.handle()); !why_not.empty()) {
        std::printf("skipped: no headless OpenGL context: %s\n", why_not.c_str());
        return 0;
    }
    const Gl gl;
    if (!missing.empty()) {
        std::printf("skipped: no OpenGL function %s\n", missing.c_str());
        return 0;
    }
    // CUDA shares memory only with a GL context on an NVIDIA GPU (Mesa's software renderer, say,
    // answers EGL too).
    const char* renderer = reinterpret_cast<const char*>(gl.GetString(GL_RENDERER));
    const char* vendor = reinterpret_cast<const char*>(gl.GetString(GL_VENDOR));
    if (!vendor || !std::strstr(vendor, "NVIDIA")) {
        std::printf("skipped: the OpenGL context is not on an NVIDIA GPU (%s, %s)\n",
                    vendor ? vendor : "?", renderer ? renderer : "?");
        return 0;
    }
    std::printf("OpenGL on %s\n", renderer ? renderer : "?");

    Stream stream = device.create_stream();
    ObjectCode code =
        Program(kSource, SourceType::cxx, {.arch = device.arch()}).compile(CodeType::cubin);

    // GL's objects: a buffer of n unsigned ints and a width x height RGBA8 texture, no data yet.
    const unsigned n = 4096;
    const int width = 256, height = 128;
    GLuint gl_buffer = 0, gl_texture = 0;
    gl.GenBuffers(1, &gl_buffer);
    gl.BindBuffer(GL_ARRAY_BUFFER, gl_buffer);
    gl.BufferData(GL_ARRAY_BUFFER, n * sizeof(unsigned), nullptr, GL_DYNAMIC_DRAW);
    gl.BindBuffer(GL_ARRAY_BUFFER, 0);
    gl.GenTextures(1, &gl_texture);
    gl.BindTexture(GL_TEXTURE_2D, gl_texture);
    gl.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);  // complete at level 0
    gl.TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    gl.TexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    gl.BindTexture(GL_TEXTURE_2D, 0);
    if (GLenum error = gl.GetError(); error != GL_NO_ERROR) {
        std::fprintf(stderr, "error: making the GL objects: GL error 0x%04x\n", error);
        return 1;
    }

    // Registered once, mapped around each use; the GL context must be current on this thread.
    GraphicsResource points =
        GraphicsResource::from_gl_buffer(device, gl_buffer, GraphicsRegisterFlags::write_discard);
    GraphicsResource image = GraphicsResource::from_gl_image(
        device, gl_texture, GL_TEXTURE_2D,
        {.flags = GraphicsRegisterFlags::write_discard, .surface_load_store = true});

    // The buffer: map (after GL's earlier commands), the kernel writes it, unmap (GL's later
    // commands come after the kernel). mapped_buffer() is valid only while mapped.
    points.map(stream, GraphicsMapFlags::write_discard);
    launch(stream, LaunchConfig{.grid = (n + 255) / 256, .block = 256},
           code.get_kernel("fill_buffer"), points.mapped_buffer(), n);
    points.unmap(stream);

    // The texture: its level 0 as a CudaArray, written through a surface object.
    image.map(stream, GraphicsMapFlags::write_discard);
    {
        SurfaceObject surface = SurfaceObject::from_array(image.mapped_array());
        launch(stream, LaunchConfig{.grid = Dim3(width / 16, height / 16), .block = Dim3(16, 16)},
               code.get_kernel("fill_image"), surface, width, height);
    }
    image.unmap(stream);

    // GL reads both back; unmap ordered its reads after the kernels.
    std::vector<unsigned> values(n);
    gl.BindBuffer(GL_ARRAY_BUFFER, gl_buffer);
    gl.GetBufferSubData(GL_ARRAY_BUFFER, 0, n * sizeof(unsigned), values.data());
    gl.BindBuffer(GL_ARRAY_BUFFER, 0);
    std::vector<unsigned char> texels(std::size_t(width) * height * 4);
    gl.BindTexture(GL_TEXTURE_2D, gl_texture);
    gl.PixelStorei(GL_PACK_ALIGNMENT, 1);
    gl.GetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, texels.data());
    gl.BindTexture(GL_TEXTURE_2D, 0);
    if (GLenum error = gl.GetError(); error != GL_NO_ERROR) {
        std::fprintf(stderr, "error: reading back through GL: GL error 0x%04x\n", error);
        return 1;
    }

    std::size_t wrong_values = 0, wrong_texels = 0;
    for (unsigned i = 0; i < n; ++i) wrong_values += values[i] != 3u * i + 1u;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            const unsigned char* t = &texels[(std::size_t(y) * width + x) * 4];
            wrong_texels += t[0] != x || t[1] != y || t[2] != (x ^ y) || t[3] != 255;
        }

    // Unregister while the GL context is current (the driver's rule), then free GL's objects;
    // the context goes last, with `headless`.
    points.close();
    image.close();
    gl.DeleteBuffers(1, &gl_buffer);
    gl.DeleteTextures(1, &gl_texture);

    std::printf("GL buffer of %u values and %d x %d RGBA8 texture written by kernels, read by GL: "
                "%zu wrong values, %zu wrong texels\n",
                n, width, height, wrong_values, wrong_texels);
    return wrong_values == 0 && wrong_texels == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
