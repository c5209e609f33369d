// Texture objects: creating and destroying one over a 2D CUDA array, and launching a kernel that
// fetches through one, cudacore beside the raw driver calls in alternating rounds. raw/... calls
// cuTexObjectCreate / cuTexObjectDestroy with a CUDA_RESOURCE_DESC and CUDA_TEXTURE_DESC filled
// by hand, and cuLaunchKernel with the CUtexObject; cudacore/... goes through
// TextureObject::from_array (option checks, a shared box) and launch() (argument checks, and the
// launch noted so the texture's release waits for it). Target: within 1.1x.
#include "bench_support.hpp"

#include "cudacore/array_copy.hpp"
#include "cudacore/cuda_array.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/texture.hpp"
#include "loader/driver_api.hpp"

#include <optional>
#include <vector>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
extern "C" __global__ void fetch(cudaTextureObject_t tex, float* out) {
    float u = (threadIdx.x + 0.5f) / blockDim.x;
    out[threadIdx.x] = tex2D<float>(tex, u, 0.5f);
}
)";

constexpr unsigned width = 256, height = 256;

struct Fixture : bench::GpuFixture {
    std::optional<ObjectCode> code;
    std::optional<Kernel> fetch;
    std::optional<CudaArray> array;
    CUdeviceptr out = 0;

    static Fixture& get() {
        static Fixture fixture;
        return fixture;
    }

private:
    Fixture() {
        if (!device) return;  // no GPU: nothing to make
        code.emplace(compile(kSource, "texture_bench"));
        fetch.emplace(code->get_kernel("fetch"));
        array.emplace(CudaArray::create(*device, {.format = ArrayFormat::float32, .width = width,
                                                  .height = height}));
        std::vector<float> image(width * height, 1.0f);
        copy_to_array(*array, image.data(), image.size() * sizeof(float), *stream);
        stream->sync();
        detail::check(detail::driver().cuMemAlloc(&out, 128 * sizeof(float)), "cuMemAlloc");
    }
};

const TextureOptions sampling{.filter = TextureFilterMode::linear, .normalized_coordinates = true};

// The descriptors cudacore builds for `sampling`, filled by hand.
void raw_descriptors(CUarray array, CUDA_RESOURCE_DESC& resource, CUDA_TEXTURE_DESC& texture) {
    resource = {};
    resource.resType = CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    texture = {};
    for (auto& mode : texture.addressMode) mode = CU_TR_ADDRESS_MODE_CLAMP;
    texture.filterMode = CU_TR_FILTER_MODE_LINEAR;
    texture.flags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES;
}

using bench::skip_without_gpu;

void raw_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    for (auto _ : state) {
        CUDA_RESOURCE_DESC resource;
        CUDA_TEXTURE_DESC texture;
        raw_descriptors(f.array->handle(), resource, texture);
        CUtexObject object = 0;
        detail::check(api.cuTexObjectCreate(&object, &resource, &texture, nullptr), "cuTexObjectCreate");
        benchmark::DoNotOptimize(object);
        api.cuTexObjectDestroy(object);
    }
}

void cudacore_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    for (auto _ : state) {
        TextureObject texture = TextureObject::from_array(*f.array, sampling);
        benchmark::DoNotOptimize(texture.handle());
    }
}

void raw_fetch_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    CUDA_RESOURCE_DESC resource;
    CUDA_TEXTURE_DESC descriptor;
    raw_descriptors(f.array->handle(), resource, descriptor);
    CUtexObject texture = 0;
    detail::check(api.cuTexObjectCreate(&texture, &resource, &descriptor, nullptr), "cuTexObjectCreate");
    auto function = reinterpret_cast<CUfunction>(f.fetch->handle());
    CUstream stream = f.stream->handle();
    CUdeviceptr out = f.out;
    void* args[] = {&texture, &out};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, 128, 1, 1, 0, stream, args, nullptr),
                          "cuLaunchKernel");
    });
    f.stream->sync();
    api.cuTexObjectDestroy(texture);
}

void cudacore_fetch_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const TextureObject texture = TextureObject::from_array(*f.array, sampling);
    auto* out = reinterpret_cast<float*>(f.out);
    const LaunchConfig config{.grid = 1, .block = 128};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i) launch(*f.stream, config, *f.fetch, texture, out);
    });
}

using bench::alternate;
const int registered[] = {
    alternate("texture_create_destroy", raw_create_destroy, cudacore_create_destroy, false),
    alternate("texture_fetch_launch", raw_fetch_launch, cudacore_fetch_launch, bench::Clock::manual),
};

}  // namespace

CUDACORE_BENCH_MAIN();
