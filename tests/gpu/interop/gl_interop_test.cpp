// OpenGL interop on a GPU, headless through EGL: a GL buffer written by a kernel through its
// mapped Buffer and read back by GL (and GL's data read by CUDA); a GL texture written through a
// surface over its mapped array, and another filled by an array copy, both read back with
// glGetTexImage; the map flags; the errors (a resource not mapped, mapped twice, closed, no GL
// context current); and the lifetimes (a mapped view outliving its GraphicsResource, close()
// while mapped, static objects released at exit), all released without a warning. Skips, printing
// why, without a GPU or without an EGL display and OpenGL context.
#include "egl_context.hpp"
#include "test_support.hpp"

#include "cudacore/array_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/graphics_resource.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/program.hpp"
#include "cudacore/surface.hpp"
#include "runtime/release/release.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace cudacore;
using test::expect_invalid;

constexpr const char* kernels = R"(
extern "C" __global__ void write_pattern(unsigned* out, unsigned n, unsigned seed) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = i * 2654435761u + seed;
}
extern "C" __global__ void add_one(const unsigned* in, unsigned* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1u;
}
extern "C" __global__ void write_surface(cudaSurfaceObject_t surface, int width, int height) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) surf2Dwrite(y * 1000.0f + x + 0.25f, surface, x * 4, y);
}
)";

unsigned pattern(unsigned i, unsigned seed) { return i * 2654435761u + seed; }

class GlInteropGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        std::string why_not;
        gl_context_ = test::EglContext::create(why_not);
        if (!gl_context_) GTEST_SKIP() << why_not;
        std::printf("OpenGL: %s\n", gl_context_->renderer().c_str());
        device_.emplace(0);
        stream_.emplace(device_->create_stream());
        // A GL context on a renderer CUDA cannot share with (Mesa's software one) is a skip; on
        // NVIDIA's it must work.
        const GLuint probe = gl_buffer(64);
        try {
            GraphicsResource::from_gl_buffer(*device_, probe).close();
        } catch (const DriverError& e) {
            if (gl_context_->renderer().find("NVIDIA") == std::string::npos)
                GTEST_SKIP() << "the EGL context is not on an NVIDIA GPU (" << e.what() << ")";
            FAIL() << e.what();
        }
        ProgramOptions options;
        options.name = "gl_interop_test";
        options.arch = device_->arch();
        code_ = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
    }

    void TearDown() override {
        if (!gl_context_) return;
        const test::GlFunctions& gl = gl_context_->gl();
        if (!buffers_.empty()) gl.DeleteBuffers(GLsizei(buffers_.size()), buffers_.data());
        if (!textures_.empty()) gl.DeleteTextures(GLsizei(textures_.size()), textures_.data());
        gl_context_.reset();
    }

    const test::GlFunctions& gl() const { return gl_context_->gl(); }

    // A GL buffer of `bytes`, filled with `data` when given (else uninitialised).
    GLuint gl_buffer(std::size_t bytes, const void* data = nullptr) {
        GLuint name = 0;
        gl().GenBuffers(1, &name);
        gl().BindBuffer(GL_ARRAY_BUFFER, name);
        gl().BufferData(GL_ARRAY_BUFFER, GLsizeiptr(bytes), data, GL_DYNAMIC_DRAW);
        gl().BindBuffer(GL_ARRAY_BUFFER, 0);
        EXPECT_EQ(gl().GetError(), GLenum(GL_NO_ERROR));
        buffers_.push_back(name);
        return name;
    }
    std::vector<unsigned> read_gl_buffer(GLuint name, std::size_t count) {
        std::vector<unsigned> values(count);
        gl().BindBuffer(GL_ARRAY_BUFFER, name);
        gl().GetBufferSubData(GL_ARRAY_BUFFER, 0, GLsizeiptr(count * sizeof(unsigned)),
                              values.data());
        gl().BindBuffer(GL_ARRAY_BUFFER, 0);
        EXPECT_EQ(gl().GetError(), GLenum(GL_NO_ERROR));
        return values;
    }
    // A complete 2D texture (one level, nearest filtering).
    GLuint gl_texture(GLint internal_format, int width, int height, GLenum format, GLenum type,
                      const void* data = nullptr) {
        GLuint name = 0;
        gl().GenTextures(1, &name);
        gl().BindTexture(GL_TEXTURE_2D, name);
        gl().TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        gl().TexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        gl().PixelStorei(GL_UNPACK_ALIGNMENT, 1);
        gl().TexImage2D(GL_TEXTURE_2D, 0, internal_format, width, height, 0, format, type, data);
        gl().BindTexture(GL_TEXTURE_2D, 0);
        EXPECT_EQ(gl().GetError(), GLenum(GL_NO_ERROR));
        textures_.push_back(name);
        return name;
    }
    template <class T>
    std::vector<T> read_gl_texture(GLuint name, std::size_t count, GLenum format, GLenum type) {
        std::vector<T> values(count);
        gl().BindTexture(GL_TEXTURE_2D, name);
        gl().PixelStorei(GL_PACK_ALIGNMENT, 1);
        gl().GetTexImage(GL_TEXTURE_2D, 0, format, type, values.data());
        gl().BindTexture(GL_TEXTURE_2D, 0);
        EXPECT_EQ(gl().GetError(), GLenum(GL_NO_ERROR));
        return values;
    }

    void write_pattern(const Buffer& out, unsigned n, unsigned seed) {
        launch(*stream_, LaunchConfig{.grid = (n + 255) / 256, .block = 256},
               code_->get_kernel("write_pattern"), out, n, seed);
    }

    std::unique_ptr<test::EglContext> gl_context_;
    std::optional<Device> device_;
    std::optional<Stream> stream_;
    std::optional<ObjectCode> code_;
    std::vector<GLuint> buffers_, textures_;
};

TEST_F(GlInteropGpu, KernelWritesAGlBufferThatGlReadsBack) {
    constexpr unsigned n = 4096;
    const GLuint name = gl_buffer(n * sizeof(unsigned));
    test::WarningLog warnings;
    {
        const GraphicsResource resource =
            GraphicsResource::from_gl_buffer(*device_, name, GraphicsRegisterFlags::write_discard);
        EXPECT_NE(resource.handle(), nullptr);
        EXPECT_EQ(resource.device_ordinal(), 0);
        EXPECT_EQ(resource.description(),
                  "GL buffer " + std::to_string(name) + " (write-discard) on device 0");
        EXPECT_FALSE(resource.is_mapped());
        resource.map(*stream_, GraphicsMapFlags::write_discard);
        EXPECT_TRUE(resource.is_mapped());
        const Buffer mapped = resource.mapped_buffer();
        EXPECT_EQ(mapped.size(), n * sizeof(unsigned));
        EXPECT_NE(mapped.handle(), 0u);
        EXPECT_TRUE(mapped.is_device_accessible());
        EXPECT_FALSE(mapped.is_host_accessible());
        EXPECT_FALSE(mapped.owns_memory());
        EXPECT_EQ(mapped.device_ordinal(), 0);
        write_pattern(mapped, n, 7);
        resource.unmap(*stream_);
        EXPECT_FALSE(resource.is_mapped());
    }
    const std::vector<unsigned> read = read_gl_buffer(name, n);  // ordered after the unmap
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(read[i], pattern(i, 7)) << i;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
}

TEST_F(GlInteropGpu, KernelReadsWhatGlWrote) {
    constexpr unsigned n = 1000;
    std::vector<unsigned> values(n);
    for (unsigned i = 0; i < n; ++i) values[i] = pattern(i, 3);
    const GLuint name = gl_buffer(n * sizeof(unsigned), values.data());
    const GraphicsResource resource =
        GraphicsResource::from_gl_buffer(*device_, name, GraphicsRegisterFlags::read_only);
    resource.map(*stream_, GraphicsMapFlags::read_only);
    const Buffer out = device_->allocate(n * sizeof(unsigned), *stream_);
    launch(*stream_, LaunchConfig{.grid = (n + 255) / 256, .block = 256},
           code_->get_kernel("add_one"), resource.mapped_buffer(), out, n);
    resource.unmap();  // on the stream it was mapped on
    std::vector<unsigned> read(n);
    out.copy_to(read, *stream_);
    stream_->sync();
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(read[i], pattern(i, 3) + 1) << i;
}

TEST_F(GlInteropGpu, KernelWritesAGlTextureThroughASurface) {
    constexpr int width = 64, height = 32;
    const GLuint name = gl_texture(GL_R32F, width, height, GL_RED, GL_FLOAT);
    test::WarningLog warnings;
    {
        GraphicsResource resource = GraphicsResource::from_gl_image(
            *device_, name, GL_TEXTURE_2D,
            {.flags = GraphicsRegisterFlags::write_discard, .surface_load_store = true});
        EXPECT_EQ(resource.description(),
                  "GL texture " + std::to_string(name) +
                      " (GL_TEXTURE_2D, write-discard, surface load/store) on device 0");
        resource.map(*stream_);
        {
            const CudaArray array = resource.mapped_array();
            EXPECT_EQ(array.options().format, ArrayFormat::float32);
            EXPECT_EQ(array.options().channels, 1u);
            EXPECT_EQ(array.options().width, std::size_t(width));
            EXPECT_EQ(array.options().height, std::size_t(height));
            EXPECT_EQ(array.shape(), ArrayShape::two_d);
            EXPECT_EQ(array.element_size(), 4u);
            EXPECT_TRUE(array.options().surface_load_store);
            const SurfaceObject surface = SurfaceObject::from_array(array);
            launch(*stream_, LaunchConfig{.grid = height, .block = width},
                   code_->get_kernel("write_surface"), surface, width, height);
        }
        // The surface is destroyed (on the release thread, after the kernel) while still mapped.
        detail::wait_for_deferred_releases();
        resource.unmap(*stream_);
        // Unregistered here, where the GL context is current, whatever the views' releases do.
        resource.close();
    }
    const std::vector<float> read =
        read_gl_texture<float>(name, std::size_t(width) * height, GL_RED, GL_FLOAT);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            ASSERT_EQ(read[std::size_t(y) * width + x], y * 1000.0f + x + 0.25f) << x << ", " << y;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
}

TEST_F(GlInteropGpu, ArrayCopiesInAndOutOfAGlTexture) {
    constexpr int width = 40, height = 24;
    std::vector<std::uint8_t> from_gl(std::size_t(width) * height * 4);
    for (std::size_t i = 0; i < from_gl.size(); ++i) from_gl[i] = std::uint8_t(i * 7 + 1);
    const GLuint name = gl_texture(GL_RGBA8, width, height, GL_RGBA, GL_UNSIGNED_BYTE, from_gl.data());
    GraphicsResource resource = GraphicsResource::from_gl_image(*device_, name, GL_TEXTURE_2D);
    resource.map(*stream_);
    const CudaArray array = resource.mapped_array(0, 0);
    EXPECT_EQ(array.options().format, ArrayFormat::uint8);
    EXPECT_EQ(array.options().channels, 4u);
    EXPECT_EQ(array.options().width, std::size_t(width));
    EXPECT_EQ(array.options().height, std::size_t(height));
    std::vector<std::uint8_t> read(from_gl.size());
    copy_from_array(read.data(), read.size(), array, *stream_);
    std::vector<std::uint8_t> from_cuda(from_gl.size());
    for (std::size_t i = 0; i < from_cuda.size(); ++i) from_cuda[i] = std::uint8_t(255 - i * 3);
    copy_to_array(array, from_cuda.data(), from_cuda.size(), *stream_);
    stream_->sync();  // the host buffers are read and written by the copies
    EXPECT_EQ(read, from_gl);
    resource.unmap(*stream_);
    EXPECT_EQ(read_gl_texture<std::uint8_t>(name, from_cuda.size(), GL_RGBA, GL_UNSIGNED_BYTE),
              from_cuda);
    // Map flags change between maps (cuGraphicsResourceSetMapFlags).
    resource.map(*stream_, GraphicsMapFlags::read_only);
    copy_from_array(read.data(), read.size(), resource.mapped_array(), *stream_);
    stream_->sync();
    EXPECT_EQ(read, from_cuda);
    resource.unmap(*stream_);
    resource.close();  // here, where the GL context is current (the copies' views may go later)
}

TEST_F(GlInteropGpu, ErrorsNameTheResourceAndWhatIsWrong) {
    const GLuint buffer = gl_buffer(256);
    const GLuint texture = gl_texture(GL_RGBA8, 4, 4, GL_RGBA, GL_UNSIGNED_BYTE);
    GraphicsResource resource = GraphicsResource::from_gl_buffer(*device_, buffer);
    const std::string described = "GL buffer " + std::to_string(buffer);
    expect_invalid([&] { resource.mapped_buffer(); },
                   {"GraphicsResource::mapped_buffer", described.c_str(), "is not mapped"});
    expect_invalid([&] { resource.unmap(*stream_); }, {"GraphicsResource::unmap", "is not mapped"});
    resource.map(*stream_);
    expect_invalid([&] { resource.map(*stream_); }, {"GraphicsResource::map", "already mapped"});
    expect_invalid([&] { resource.mapped_array(); }, {"is a buffer", "use mapped_buffer()"});
    resource.unmap(*stream_);
    expect_invalid([&] { resource.mapped_buffer(); }, {"is not mapped"});  // no stale pointer

    const GraphicsResource image = GraphicsResource::from_gl_image(*device_, texture, GL_TEXTURE_2D);
    image.map(*stream_);
    expect_invalid([&] { image.mapped_buffer(); }, {"is an image", "use mapped_array()"});
    try {
        image.mapped_array(3, 0);  // a 2D texture has one layer
        ADD_FAILURE() << "no DriverError";
    } catch (const DriverError& e) {
        EXPECT_EQ(e.call(), "cuGraphicsSubResourceGetMappedArray");
        EXPECT_NE(std::string(e.what()).find("array index 3"), std::string::npos) << e.what();
    }
    image.unmap(*stream_);

    // No GL context current on this thread.
    gl_context_->release_current();
    expect_invalid([&] { GraphicsResource::from_gl_buffer(*device_, buffer); },
                   {"GraphicsResource::from_gl_buffer", "no OpenGL context is current",
                    described.c_str()});
    expect_invalid([&] { resource.map(*stream_); },
                   {"GraphicsResource::map", "no OpenGL context is current"});
    gl_context_->make_current();

    resource.close();
    EXPECT_TRUE(resource.is_closed());
    EXPECT_EQ(resource.handle(), nullptr);
    expect_invalid([&] { resource.map(*stream_); }, {"GraphicsResource::map", "is closed"});
}

TEST_F(GlInteropGpu, MappedViewOutlivesItsResource) {
    constexpr unsigned n = 512;
    const GLuint name = gl_buffer(n * sizeof(unsigned));
    test::WarningLog warnings;
    Buffer view;
    {
        const GraphicsResource resource = GraphicsResource::from_gl_buffer(*device_, name);
        resource.map(*stream_);
        view = resource.mapped_buffer();
    }  // the resource goes; the view holds it, still mapped
    write_pattern(view, n, 11);
    view = Buffer();  // the last holder: unmapped on the map's stream, then unregistered
    const std::vector<unsigned> read = read_gl_buffer(name, n);
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(read[i], pattern(i, 11)) << i;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
    // Unregistered: registering it again maps the new data.
    GraphicsResource again = GraphicsResource::from_gl_buffer(*device_, name);
    again.map(*stream_);
    write_pattern(again.mapped_buffer(), n, 12);
    again.close();  // unmaps on the map's stream first
    const std::vector<unsigned> reread = read_gl_buffer(name, n);
    for (unsigned i = 0; i < n; ++i) ASSERT_EQ(reread[i], pattern(i, 12)) << i;
    EXPECT_TRUE(warnings.seen.empty()) << warnings.seen.front().message;
}

// Released at exit, in static objects, still mapped: with the GL context alive then (nothing to
// report), and with it destroyed first (the driver may refuse the unregistration: a warning at
// most, never a crash or a hang). Children, so that exit runs for real.
TEST(GlInteropExit, MappedResourceInStaticObjectsIsReleasedAtExit) {
    CUDACORE_REQUIRE_GPU();
    for (const char* mode : {"exit-mapped", "exit-after-gl"}) {
        auto result = test::run_process({test::helper_path("gl_interop_probe").string(), mode});
        if (result.exit_code == 77) GTEST_SKIP() << result.out;
        EXPECT_EQ(result.exit_code, 0) << mode << "\n" << result.out << result.err;
        EXPECT_NE(result.out.find("mapped 4096 bytes"), std::string::npos) << mode << result.out;
        if (std::string(mode) == "exit-mapped")
            EXPECT_EQ(result.out.find("warning:"), std::string::npos) << result.out;
        else
            std::printf("%s: %s", mode, result.out.c_str());  // what the driver said, if anything
    }
}

}  // namespace
