// Which OpenGL context is current on the calling thread, asked of the window-system libraries
// opened at run time (nothing links against them): EGL (libEGL.so.1, eglGetCurrentContext) and
// GLX (libGL.so.1 then libGLX.so.0, glXGetCurrentContext). CUDA's OpenGL interop needs the GL
// context that owns a resource to be current; asking first turns the driver's bare
// CUDA_ERROR_INVALID_GRAPHICS_CONTEXT into an error that says what to do. Either library is
// enough (a headless EGL program has no GLX); only when neither opens is it a LoaderError.
#pragma once

#include "loader/dynamic_library.hpp"

#include <string>

namespace cudacore::detail {

struct GlContextQuery {
    using GetCurrentContext = void* (*)();  // EGLContext / GLXContext are pointers
    GetCurrentContext egl_get_current_context = nullptr;  // null when EGL did not open
    GetCurrentContext glx_get_current_context = nullptr;  // null when GLX did not open
    std::string egl_path;  // the library each came from (empty when it did not open)
    std::string glx_path;
};

// The searches gl_context_query() makes: CUDACORE_EGL_PATH / CUDACORE_GLX_PATH when set, else
// the sonames glvnd installs.
LibrarySearch egl_library_search();
LibrarySearch glx_library_search();

// Opens what `egl` and `glx` find. Throws LoaderError naming every path tried in both, why each
// failed and both variables, when neither opens (or neither has its get-current-context symbol).
GlContextQuery open_gl_context_query(const LibrarySearch& egl, const LibrarySearch& glx);

// open_gl_context_query of the default searches, once and thread-safely; the same LoaderError
// again on every call when it failed.
const GlContextQuery& gl_context_query();

// "EGL context 0x... (libEGL.so.1)" for the context current on this thread, EGL asked first; empty
// when neither library reports one. Never throws beyond std::bad_alloc.
std::string current_gl_context(const GlContextQuery& query);

// What was asked, for messages: "eglGetCurrentContext (libEGL.so.1) and glXGetCurrentContext
// (libGL.so.1) report none".
std::string describe_gl_context_query(const GlContextQuery& query);

}  // namespace cudacore::detail
