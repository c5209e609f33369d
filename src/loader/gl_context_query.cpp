#include "loader/gl_context_query.hpp"

#include "cudacore/errors.hpp"

#include <cstdio>

namespace cudacore::detail {

LibrarySearch egl_library_search() {
    return {"EGL (libEGL.so.1, from libglvnd)", "CUDACORE_EGL_PATH", {"libEGL.so.1"}};
}

LibrarySearch glx_library_search() {
    return {"GLX (libGL.so.1 or libGLX.so.0, from libglvnd)", "CUDACORE_GLX_PATH",
            {"libGL.so.1", "libGLX.so.0"}};
}

GlContextQuery open_gl_context_query(const LibrarySearch& egl, const LibrarySearch& glx) {
    GlContextQuery query;
    std::vector<std::string> searched;
    std::string reasons;
    auto open = [&](const LibrarySearch& search, const char* symbol, std::string& path) {
        try {
            OpenedLibrary library = open_library(search);
            auto function =
                reinterpret_cast<GlContextQuery::GetCurrentContext>(find_symbol(library, symbol));
            searched.push_back(library.path);
            if (!function) {
                reasons += (reasons.empty() ? "" : "; ") + library.path + " has no " + symbol;
                return function;
            }
            path = library.path;
            return function;
        } catch (const LoaderError& e) {
            searched.insert(searched.end(), e.searched().begin(), e.searched().end());
            reasons += (reasons.empty() ? "" : "; ") + e.library() + ": " + e.reason();
            return GlContextQuery::GetCurrentContext{};
        }
    };
    query.egl_get_current_context = open(egl, "eglGetCurrentContext", query.egl_path);
    query.glx_get_current_context = open(glx, "glXGetCurrentContext", query.glx_path);
    if (!query.egl_get_current_context && !query.glx_get_current_context)
        throw LoaderError("OpenGL's context libraries, " + egl.library + " or " + glx.library,
                          searched, egl.env_var + " or " + glx.env_var,
                          reasons + " (install libegl1 or libgl1; OpenGL interop needs one)");
    return query;
}

namespace {

GlContextQuery load_query() {
    return open_gl_context_query(egl_library_search(), glx_library_search());
}

std::string describe_context(const char* api, void* context, const std::string& path) {
    char text[64];
    std::snprintf(text, sizeof text, "%s context %p", api, context);
    return std::string(text) + " (" + path + ")";
}

}  // namespace

const GlContextQuery& gl_context_query() {
    static const auto* loaded = new LoadedApi<GlContextQuery>(load_query);  // leaked: valid at exit
    return loaded->get();
}

std::string current_gl_context(const GlContextQuery& query) {
    if (query.egl_get_current_context)
        if (void* context = query.egl_get_current_context())
            return describe_context("EGL", context, query.egl_path);
    if (query.glx_get_current_context)
        if (void* context = query.glx_get_current_context())
            return describe_context("GLX", context, query.glx_path);
    return {};
}

std::string describe_gl_context_query(const GlContextQuery& query) {
    std::string asked;
    if (query.egl_get_current_context) asked = "eglGetCurrentContext (" + query.egl_path + ")";
    if (query.glx_get_current_context) {
        if (!asked.empty()) asked += " and ";
        asked += "glXGetCurrentContext (" + query.glx_path + ")";
    }
    const bool both = query.egl_get_current_context && query.glx_get_current_context;
    return asked + (both ? " report none" : " reports none");
}

}  // namespace cudacore::detail
