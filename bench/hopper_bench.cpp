// Green contexts and tensor maps: the cost of a launch on a green context's stream, of a launch
// that passes a TensorMap (a 128-byte descriptor by value), and of encoding a TensorMap (host-side
// checks plus cuTensorMapEncodeTiled), each beside the raw driver call. Launch rows time bursts of
// bench::launch_burst launches with the host clock, the stream drained outside the timed region.
#include "bench_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/green_context.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "cudacore/tensor_map.hpp"
#include "loader/driver_api.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
struct alignas(64) TensorMapBytes { unsigned long long opaque[16]; };
extern "C" __global__ void empty() {}
extern "C" __global__ void with_map(const __grid_constant__ TensorMapBytes map, int x) {
    if (threadIdx.x == 1024) { (void)map; (void)x; }
}
)";

struct Fixture : bench::GpuFixture {
    std::optional<GreenContext> green;
    std::optional<Stream> green_stream;
    std::optional<ObjectCode> code;
    std::optional<Kernel> empty;
    std::optional<Kernel> with_map;
    Buffer tensor;
    std::optional<TensorMap> map;

    static Fixture& get() {
        static Fixture fixture;
        return fixture;
    }

private:
    Fixture() {
        if (!device) return;  // no GPU: nothing to make
        const SmResource sms = sm_resource(*device);
        const unsigned granularity =
            std::max({8u, sms.coscheduled_alignment(), sms.min_partition_size()});
        const SmSplit split = sms.split(
            {.count = 2, .min_sm_count = std::max(granularity, sms.sm_count() / 2 / granularity *
                                                                    granularity)});
        green.emplace(GreenContext::create(split.groups[0]));
        green_stream.emplace(green->create_stream());
        code.emplace(compile(kSource, "hopper_bench"));
        empty.emplace(code->get_kernel("empty"));
        with_map.emplace(code->get_kernel("with_map"));
        tensor = device->allocate(256 * 256 * sizeof(float), *stream);
        map.emplace(TensorMap::tiled(tensor, {.shape = {256, 256}, .box = {64, 64}}));
        stream->sync();
    }
};

using bench::skip_without_gpu;

void raw_green_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    auto function = reinterpret_cast<CUfunction>(f.empty->handle());
    CUstream stream = f.green_stream->handle();
    bench::time_launch_bursts(state, *f.green_stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, nullptr,
                                             nullptr),
                          "cuLaunchKernel");
    });
}

void cudacore_green_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const LaunchConfig config{.grid = 1, .block = 32};
    bench::time_launch_bursts(state, *f.green_stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i) launch(*f.green_stream, config, *f.empty);
    });
}

void raw_tensor_map_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    auto function = reinterpret_cast<CUfunction>(f.with_map->handle());
    CUstream stream = f.stream->handle();
    CUtensorMap descriptor = f.map->descriptor();
    int x = 3;
    void* args[] = {&descriptor, &x};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr),
                          "cuLaunchKernel");
    });
}

void cudacore_tensor_map_launch(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const LaunchConfig config{.grid = 1, .block = 32};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i) launch(*f.stream, config, *f.with_map, *f.map, 3);
    });
}

void raw_tensor_map_encode(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    const cuuint64_t shape[] = {256, 256};
    const cuuint64_t strides[] = {256 * sizeof(float)};
    const cuuint32_t box[] = {64, 64};
    const cuuint32_t steps[] = {1, 1};
    for (auto _ : state) {
        CUtensorMap map;
        detail::check(api.cuTensorMapEncodeTiled(
                          &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, f.tensor.data(), shape,
                          strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                      "cuTensorMapEncodeTiled");
        benchmark::DoNotOptimize(map);
    }
}

void cudacore_tensor_map_encode(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const TensorMapOptions options{.shape = {256, 256}, .box = {64, 64}};
    for (auto _ : state) {
        TensorMap map = TensorMap::tiled(f.tensor, options);
        benchmark::DoNotOptimize(map);
    }
}

}  // namespace

BENCHMARK(raw_green_launch)->Name("raw/launch_on_green_context")->UseManualTime();
BENCHMARK(cudacore_green_launch)->Name("cudacore/launch_on_green_context")->UseManualTime();
BENCHMARK(raw_tensor_map_launch)->Name("raw/launch_tensor_map_argument")->UseManualTime();
BENCHMARK(cudacore_tensor_map_launch)->Name("cudacore/launch_tensor_map_argument")->UseManualTime();
BENCHMARK(raw_tensor_map_encode)->Name("raw/tensor_map_encode_tiled");
BENCHMARK(cudacore_tensor_map_encode)->Name("cudacore/tensor_map_encode_tiled");

CUDACORE_BENCH_MAIN();
