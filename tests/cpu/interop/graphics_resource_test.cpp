// OpenGL interop without a GPU: the flags and targets as the driver gets them, arguments refused
// before anything is opened, the clear error when no GL context is current (and, with Mesa's
// software EGL where it is installed, that a current context is seen), a resource that is not
// mapped or is closed, the missing GL libraries named with what was searched, and the no-driver
// path once a GL context is current.
#include "egl_context.hpp"
#include "test_support.hpp"

#include "cudacore/errors.hpp"
#include "cudacore/graphics_resource.hpp"
#include "cudacore/stream.hpp"
#include "interop/graphics_resource_box.hpp"
#include "loader/gl_context_query.hpp"
#include "support/box_access.hpp"

#include <GL/gl.h>
#include <GL/glext.h>

#include <string>

namespace {

using namespace cudacore;
using cudacore::test::expect_invalid;
using cudacore::test::helper_path;
using cudacore::test::run_process;

static_assert(static_cast<unsigned>(GraphicsRegisterFlags::read_only) ==
              CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY);
static_assert(static_cast<unsigned>(GraphicsRegisterFlags::write_discard) ==
              CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD);
static_assert(static_cast<unsigned>(GraphicsMapFlags::read_only) ==
              CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY);
static_assert(static_cast<unsigned>(GraphicsMapFlags::write_discard) ==
              CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD);

TEST(GraphicsFlags, NamesAndDriverValues) {
    EXPECT_EQ(to_string(GraphicsRegisterFlags::none), "none");
    EXPECT_EQ(to_string(GraphicsRegisterFlags::read_only), "read-only");
    EXPECT_EQ(to_string(GraphicsRegisterFlags::write_discard), "write-discard");
    EXPECT_EQ(to_string(static_cast<GraphicsRegisterFlags>(9)), "GraphicsRegisterFlags(9)");
    EXPECT_EQ(to_string(GraphicsMapFlags::write_discard), "write-discard");
    EXPECT_EQ(to_string(static_cast<GraphicsMapFlags>(5)), "GraphicsMapFlags(5)");

    const char* call = "test";
    EXPECT_EQ(graphics_register_flags(GraphicsRegisterFlags::none, {}, call),
              unsigned(CU_GRAPHICS_REGISTER_FLAGS_NONE));
    EXPECT_EQ(graphics_register_flags(GraphicsRegisterFlags::read_only, {}, call),
              unsigned(CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY));
    EXPECT_EQ(graphics_register_flags(GraphicsRegisterFlags::write_discard,
                                      {.surface_load_store = true}, call),
              unsigned(CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD |
                       CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST));
    EXPECT_EQ(graphics_register_flags(GraphicsRegisterFlags::none, {.texture_gather = true}, call),
              unsigned(CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER));
    expect_invalid(
        [&] { graphics_register_flags(static_cast<GraphicsRegisterFlags>(3), {}, "register"); },
        {"register", "GraphicsRegisterFlags value 3", "none, read_only, write_discard"});
}

TEST(GraphicsFlags, ImageTargetsAreTheDriversList) {
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_2D), "GL_TEXTURE_2D");
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_RECTANGLE), "GL_TEXTURE_RECTANGLE");
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_CUBE_MAP), "GL_TEXTURE_CUBE_MAP");
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_3D), "GL_TEXTURE_3D");
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_2D_ARRAY), "GL_TEXTURE_2D_ARRAY");
    EXPECT_EQ(gl_image_target_name(GL_RENDERBUFFER), "GL_RENDERBUFFER");
    EXPECT_EQ(gl_image_target_name(GL_TEXTURE_1D), "");  // CUDA does not register 1D textures
    EXPECT_EQ(gl_image_target_name(GL_ARRAY_BUFFER), "");
}

// Checked before EGL, GLX or the driver is asked: these fail the same on every machine.
TEST(GraphicsResource, RefusesBadArgumentsFirst) {
    expect_invalid([] { GraphicsResource::from_gl_buffer(0); },
                   {"GraphicsResource::from_gl_buffer", "GL buffer name 0"});
    expect_invalid([] { GraphicsResource::from_gl_image(0, GL_TEXTURE_2D); },
                   {"GraphicsResource::from_gl_image", "GL texture name 0"});
    expect_invalid([] { GraphicsResource::from_gl_image(3, GL_TEXTURE_1D); },
                   {"GraphicsResource::from_gl_image", "GL target 3552", "GL image 3",
                    "GL_TEXTURE_2D_ARRAY"});
    expect_invalid(
        [] { GraphicsResource::from_gl_buffer(4, static_cast<GraphicsRegisterFlags>(7)); },
        {"GraphicsResource::from_gl_buffer", "GraphicsRegisterFlags value 7"});
}

TEST(GraphicsResource, NoCurrentContextIsAClearError) {
    try {
        detail::gl_context_query();
    } catch (const LoaderError& e) {
        GTEST_SKIP() << "no EGL or GLX library: " << e.what();
    }
    ASSERT_EQ(detail::current_gl_context(detail::gl_context_query()), "");  // a fresh thread
    expect_invalid([] { GraphicsResource::from_gl_buffer(5, GraphicsRegisterFlags::write_discard); },
                   {"GraphicsResource::from_gl_buffer", "no OpenGL context is current",
                    "GetCurrentContext", "GL buffer 5 (write-discard)",
                    "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT"});
    expect_invalid(
        [] {
            GraphicsResource::from_gl_image(6, GL_TEXTURE_2D, {.surface_load_store = true});
        },
        {"GraphicsResource::from_gl_image", "no OpenGL context is current",
         "GL texture 6 (GL_TEXTURE_2D, none, surface load/store)"});
}

TEST(GlContextQuery, SeesTheContextCurrentOnThisThread) {
    std::string why_not;
    auto context = test::EglContext::create(why_not);
    if (!context) GTEST_SKIP() << why_not;
    const detail::GlContextQuery& query = detail::gl_context_query();
    EXPECT_NE(detail::current_gl_context(query).find("EGL context 0x"), std::string::npos)
        << context->renderer();
    context->release_current();
    EXPECT_EQ(detail::current_gl_context(query), "");
    context->make_current();
    EXPECT_NE(detail::current_gl_context(query), "");
}

TEST(GlContextQuery, MissingLibrariesNameWhatWasSearched) {
    detail::LibrarySearch egl = detail::egl_library_search();
    detail::LibrarySearch glx = detail::glx_library_search();
    egl.env_var = "CUDACORE_TEST_UNSET_EGL_PATH";  // so that a set variable cannot interfere
    glx.env_var = "CUDACORE_TEST_UNSET_GLX_PATH";
    egl.candidates = {"/nonexistent/libEGL-missing.so.1"};
    glx.candidates = {"/nonexistent/libGL-missing.so.1", "/nonexistent/libGLX-missing.so.0"};
    try {
        detail::open_gl_context_query(egl, glx);
        ADD_FAILURE() << "no LoaderError";
    } catch (const LoaderError& e) {
        const std::string message = e.what();
        for (const char* part :
             {"/nonexistent/libEGL-missing.so.1", "/nonexistent/libGL-missing.so.1",
              "/nonexistent/libGLX-missing.so.0", "CUDACORE_TEST_UNSET_EGL_PATH",
              "CUDACORE_TEST_UNSET_GLX_PATH", "EGL", "GLX"})
            EXPECT_NE(message.find(part), std::string::npos) << part << " missing in: " << message;
        EXPECT_EQ(e.searched().size(), 3u);
    }
    // Libraries that open but are not EGL or GLX.
    egl.candidates = {"libm.so.6"};
    glx.candidates = {"libm.so.6"};
    try {
        detail::open_gl_context_query(egl, glx);
        ADD_FAILURE() << "no LoaderError";
    } catch (const LoaderError& e) {
        EXPECT_NE(std::string(e.what()).find("has no eglGetCurrentContext"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("has no glXGetCurrentContext"), std::string::npos)
            << e.what();
    }
}

// The public path, in a child (the libraries are looked for once per process).
TEST(GlContextQuery, MissingLibrariesThroughTheVariables) {
    auto result = run_process({helper_path("gl_interop_probe").string(), "missing-gl"},
                              {{"CUDACORE_EGL_PATH", "/nonexistent/libEGL-missing.so.1"},
                               {"CUDACORE_GLX_PATH", "/nonexistent/libGL-missing.so.1"}});
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("LoaderError"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libEGL-missing.so.1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("/nonexistent/libGL-missing.so.1"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("CUDACORE_EGL_PATH or CUDACORE_GLX_PATH"), std::string::npos)
        << result.out;
}

// With a GL context current (Mesa's software EGL on a machine without a GPU), registering reaches
// the driver: without one, NoDriverError.
TEST(GraphicsResource, NoDriverOnceAContextIsCurrent) {
    auto result = run_process({helper_path("gl_interop_probe").string(), "no-driver"},
                              {{"CUDACORE_LIBCUDA_PATH", "/nonexistent/libcuda-missing.so.1"}});
    if (result.exit_code == 77) GTEST_SKIP() << result.out;
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_NE(result.out.find("from_gl_buffer: NoDriverError"), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("from_gl_image: NoDriverError"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("UNEXPECTED"), std::string::npos) << result.out;
}

// A resource's states, on a box made by hand (no driver is needed to refuse them).
std::shared_ptr<detail::GraphicsResourceBox> unregistered_box(bool image) {
    auto box = std::make_shared<detail::GraphicsResourceBox>();
    box->image = image;
    box->gl_name = 7;
    box->gl_target = image ? GL_TEXTURE_2D : 0;
    return box;  // handle null: its destruction calls nothing
}

TEST(GraphicsResource, NotMappedClosedAndMovedFrom) {
    auto resource = detail::BoxAccess::make<GraphicsResource>(unregistered_box(false));
    EXPECT_FALSE(resource.is_mapped());
    EXPECT_FALSE(resource.is_closed());
    EXPECT_EQ(resource.description(), "GL buffer 7 (none) on device 0");
    expect_invalid([&] { resource.mapped_buffer(); },
                   {"GraphicsResource::mapped_buffer", "GL buffer 7", "is not mapped",
                    "map(stream)"});
    expect_invalid([&] { resource.mapped_array(); },
                   {"GraphicsResource::mapped_array", "is not mapped"});
    expect_invalid([&] { resource.unmap(); }, {"GraphicsResource::unmap", "is not mapped"});

    resource.close();  // nothing registered: closes without the driver
    EXPECT_TRUE(resource.is_closed());
    EXPECT_NE(resource.description().find("(closed)"), std::string::npos);
    expect_invalid([&] { resource.mapped_buffer(); }, {"GL buffer 7", "is closed"});
    resource.close();  // idempotent

    GraphicsResource moved = std::move(resource);
    expect_invalid([&] { resource.mapped_buffer(); }, {"moved-from GraphicsResource"});
    EXPECT_TRUE(resource.is_closed());
    EXPECT_EQ(resource.handle(), nullptr);
    EXPECT_EQ(resource.device_ordinal(), -1);
    EXPECT_EQ(resource.description(), "moved-from GraphicsResource");
}

TEST(GraphicsResource, MappedStateChecksComeBeforeTheDriver) {
    // A stream of no driver stream: never handed to the driver here.
    const auto stream = detail::BoxAccess::empty<Stream>();
    auto buffer_box = unregistered_box(false);
    buffer_box->map_stream = stream;
    auto buffer = detail::BoxAccess::make<GraphicsResource>(buffer_box);
    EXPECT_TRUE(buffer.is_mapped());
    expect_invalid([&] { buffer.map(stream); }, {"GraphicsResource::map", "GL buffer 7",
                                                 "is already mapped"});
    expect_invalid([&] { buffer.map(stream, static_cast<GraphicsMapFlags>(4)); },
                   {"GraphicsResource::map", "GraphicsMapFlags value 4"});
    expect_invalid([&] { buffer.mapped_array(); },
                   {"GraphicsResource::mapped_array", "is a buffer", "use mapped_buffer()"});

    auto image_box = unregistered_box(true);
    image_box->map_stream = stream;
    auto image = detail::BoxAccess::make<GraphicsResource>(image_box);
    EXPECT_EQ(image.description(), "GL texture 7 (GL_TEXTURE_2D, none) on device 0");
    expect_invalid([&] { image.mapped_buffer(); },
                   {"GraphicsResource::mapped_buffer", "GL texture 7", "is an image",
                    "use mapped_array()"});
}

}  // namespace
