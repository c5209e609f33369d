// Objects of a created context on a real GPU: its own default streams (legacy and per-thread)
// run its work whatever is current, leaving the current context alone; CUDA arrays, mipmapped arrays, textures and surfaces made in it live there (the
// driver says so), are read and written by kernels launched in it, and keep it alive.
#include "test_support.hpp"

#include "cudacore/array_copy.hpp"
#include "cudacore/buffer.hpp"
#include "cudacore/context.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/current_context_scope.hpp"
#include "cudacore/device.hpp"
#include "cudacore/errors.hpp"
#include "cudacore/event.hpp"
#include "cudacore/kernel.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/mipmapped_array.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/program.hpp"
#include "cudacore/surface.hpp"
#include "cudacore/synchronous_memory_resource.hpp"
#include "cudacore/texture.hpp"
#include "loader/driver_api.hpp"

#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kernels = R"(
extern "C" __global__ void fill(float* out, float value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}
extern "C" __global__ void read_texture(cudaTextureObject_t tex, int width, int height, float* out) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) out[y * width + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}
extern "C" __global__ void write_surface(cudaSurfaceObject_t surface, int width, int height) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < width && y < height) surf2Dwrite(float(y * 100 + x), surface, x * 4, y);
}
)";

CUcontext current_context() {
    CUcontext current = nullptr;
    EXPECT_EQ(detail::driver().cuCtxGetCurrent(&current), CUDA_SUCCESS);
    return current;
}

class CreatedContextViewsGpu : public ::testing::Test {
protected:
    void SetUp() override {
        CUDACORE_REQUIRE_GPU();
        device_.emplace(0);
        context_.emplace(Context::create(*device_));
        ProgramOptions options;
        options.name = "created_context_views_test";
        options.arch = device_->arch();
        code_ = Program(kernels, SourceType::cxx, options).compile(CodeType::cubin);
        memory_ = std::make_shared<SynchronousMemoryResource>(*context_);
    }
    void TearDown() override {
        if (device_) device_->set_current();  // never leave a created context current
    }

    std::optional<Device> device_;
    std::optional<Context> context_;
    std::optional<ObjectCode> code_;
    std::shared_ptr<SynchronousMemoryResource> memory_;
};

// Its default streams run its work whatever is current on the calling thread (the primary
// context, or nothing on a new thread), and neither default_stream() nor the calls on the stream
// change what is current.
TEST_F(CreatedContextViewsGpu, ItsOwnDefaultStreamsRunItsWork) {
    constexpr int n = 1000;
    const auto run = [&](bool per_thread, CUcontext expected_current) {
        SCOPED_TRACE(per_thread ? "per-thread" : "legacy");
        const Stream stream = per_thread ? context_->per_thread_stream() : context_->default_stream();
        EXPECT_EQ(stream.handle(), per_thread ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
        EXPECT_EQ(stream.context(), *context_);
        EXPECT_EQ(current_context(), expected_current) << "default_stream() changed the current context";
        const Buffer out = memory_->allocate(n * sizeof(float), stream);
        launch(stream, LaunchConfig{.grid = (n + 127) / 128, .block = 128},
               code_->get_kernel("fill"), out, 3.0f, n);
        const Event done = stream.record();
        stream.wait(done);
        std::vector<float> host(n);
        out.copy_to(host, stream);
        stream.sync();
        EXPECT_TRUE(stream.is_done());
        EXPECT_TRUE(done.is_done());
        EXPECT_EQ(current_context(), expected_current) << "a call on the stream changed the current context";
        for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 3.0f + i) << i;
        CUcontext owner = nullptr;
        {
            const CurrentContextScope on(*context_);  // the driver's pointer query needs a context
            ASSERT_EQ(detail::driver().cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT,
                                                             out.handle()),
                      CUDA_SUCCESS);
        }
        EXPECT_EQ(owner, context_->handle());
    };
    {
        const CurrentContextScope primary(device_->context());
        for (const bool per_thread : {false, true}) run(per_thread, device_->context().handle());
    }
    std::thread([&] {
        for (const bool per_thread : {false, true}) run(per_thread, nullptr);
    }).join();
    Context closed = Context::create(*device_);
    closed.close();
    test::expect_invalid([&] { closed.default_stream(); }, {"Context::default_stream", "closed"});
}

TEST_F(CreatedContextViewsGpu, ArraysTexturesAndSurfacesLiveInIt) {
    constexpr int width = 32, height = 8;
    const Stream stream = context_->create_stream();
    const CudaArray array = CudaArray::create(
        *context_, {.format = ArrayFormat::float32, .width = width, .height = height,
                    .surface_load_store = true});
    // The array belongs to the created context: the driver finds it there.
    {
        CurrentContextScope on(*context_);
        CUDA_ARRAY3D_DESCRIPTOR descriptor{};
        EXPECT_EQ(detail::driver().cuArray3DGetDescriptor(&descriptor, array.handle()), CUDA_SUCCESS);
        EXPECT_EQ(descriptor.Width, static_cast<std::size_t>(width));
    }
    const SurfaceObject surface = SurfaceObject::from_array(array);
    launch(stream, LaunchConfig{.grid = height, .block = width}, code_->get_kernel("write_surface"),
           surface, width, height);
    const TextureObject texture = TextureObject::from_array(array);
    const Buffer out = memory_->allocate(width * height * sizeof(float), stream);
    launch(stream, LaunchConfig{.grid = height, .block = width}, code_->get_kernel("read_texture"),
           texture, width, height, out);
    std::vector<float> read(width * height), copied(width * height);
    out.copy_to(read, stream);
    copy_from_array(copied.data(), copied.size() * sizeof(float), array, stream);
    stream.sync();
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            ASSERT_EQ(read[y * width + x], float(y * 100 + x)) << x << ", " << y;
            ASSERT_EQ(copied[y * width + x], float(y * 100 + x)) << x << ", " << y;
        }

    // A mipmapped array, a level written from the host and read back.
    const MipmappedArray mip = MipmappedArray::create(
        *context_, {.format = ArrayFormat::float32, .width = 64, .height = 64}, 4);
    const CudaArray level2 = mip.level(2);
    std::vector<float> host(16 * 16);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = float(i);
    copy_to_array(level2, host.data(), host.size() * sizeof(float), stream);
    std::vector<float> back(host.size());
    copy_from_array(back.data(), back.size() * sizeof(float), level2, stream);
    stream.sync();
    EXPECT_EQ(back, host);
    EXPECT_NO_THROW(TextureObject::from_mipmapped_array(mip, {.normalized_coordinates = true}));

    // The array holds the context: dropping every Context value leaves it working.
    context_.reset();
    std::vector<float> again(width * height);
    copy_from_array(again.data(), again.size() * sizeof(float), array, stream);
    stream.sync();
    EXPECT_EQ(again, copied);

    Context closed = Context::create(*device_);
    closed.close();
    test::expect_invalid([&] { CudaArray::create(closed, {.width = 4}); },
                         {"CudaArray::create", "closed"});
    test::expect_invalid([&] { MipmappedArray::create(closed, {.width = 4, .height = 4}, 2); },
                         {"MipmappedArray::create", "closed"});
}

}  // namespace
