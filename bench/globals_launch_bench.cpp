// Module globals and launch attributes against the raw driver, in the same run:
//   raw/get_global (cuLibraryGetGlobal) vs cudacore/get_global (cached view after the first
//   lookup); raw/launch_attributes (cuLaunchKernelEx with priority + programmatic stream
//   serialization) vs cudacore/launch_attributes (launch() with the same LaunchConfig fields),
//   enqueue only, in bursts like launch_bench. Target: cudacore within 10% of raw.
// And what programmatic dependent launch buys: pdl/serialized vs pdl/programmatic time a
// producer/consumer pair end to end with events (the consumer's independent part overlaps the
// producer's tail when programmatic); not a raw/cudacore pair, so no ratio is printed for it.
#include "bench_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/event.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "loader/driver_api.hpp"

#include <chrono>
#include <optional>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
#include <cuda_device_runtime_api.h>
__device__ int counter;
extern "C" __global__ void empty() {}
// A producer with a long tail and a consumer with independent work before it needs the data.
extern "C" __global__ void produce(float* data, int n, int spin) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i;
    for (int k = 0; k < spin; ++k) v = v * 0.999f + 1.0f;
    if (i < n) data[i] = v;
    cudaTriggerProgrammaticLaunchCompletion();
}
extern "C" __global__ void consume(const float* data, float* out, int n, int spin) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i;
    for (int k = 0; k < spin; ++k) v = v * 0.999f + 2.0f;  // independent of the producer
    cudaGridDependencySynchronize();
    if (i < n) out[i] = data[i] + v;
}
)";

struct Fixture : bench::GpuFixture {
    std::optional<ObjectCode> code;
    std::optional<Kernel> empty;
    std::optional<Kernel> produce;
    std::optional<Kernel> consume;
    bool hopper = false;

    static Fixture& get() {
        static Fixture fixture;
        return fixture;
    }

private:
    Fixture() {
        if (!device) return;  // no GPU: nothing to make
        hopper = device->compute_capability().major >= 9;
        code.emplace(compile(kSource, "globals_launch_bench"));
        empty.emplace(code->get_kernel("empty"));
        produce.emplace(code->get_kernel("produce"));
        consume.emplace(code->get_kernel("consume"));
        code->get_global("counter");  // loaded and looked up once, like a warmed-up program
    }
};

using bench::skip_without_gpu;

bool skip_without_hopper(benchmark::State& state) {
    if (skip_without_gpu(state)) return true;
    if (!Fixture::get().hopper) {
        state.SkipWithError("programmatic dependent launch needs compute capability 9.0");
        return true;
    }
    return false;
}

void raw_get_global(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const CUlibrary library = f.code->library_handle();
    for (auto _ : state) {
        CUdeviceptr address = 0;
        std::size_t size = 0;
        detail::driver().cuLibraryGetGlobal(&address, &size, library, "counter");
        benchmark::DoNotOptimize(address);
        benchmark::DoNotOptimize(size);
    }
}

void cudacore_get_global(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    for (auto _ : state) {
        Buffer view = f.code->get_global("counter");
        benchmark::DoNotOptimize(view);
    }
}

void raw_launch_attributes(benchmark::State& state) {
    if (skip_without_hopper(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    CUlaunchAttribute attributes[2] = {};
    attributes[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attributes[0].value.priority = 0;
    attributes[1].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attributes[1].value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 32;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = f.stream->handle();
    config.attrs = attributes;
    config.numAttrs = 2;
    auto function = reinterpret_cast<CUfunction>(f.empty->handle());
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernelEx(&config, function, nullptr, nullptr),
                          "cuLaunchKernelEx");
    });
}

void cudacore_launch_attributes(benchmark::State& state) {
    if (skip_without_hopper(state)) return;
    Fixture& f = Fixture::get();
    LaunchConfig config{.grid = 1, .block = 32};
    config.priority = 0;
    config.programmatic_stream_serialization = true;
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i) launch(*f.stream, config, *f.empty);
    });
}

// One producer/consumer pair per iteration, timed on the GPU with events.
void pdl_pair(benchmark::State& state, bool programmatic) {
    if (skip_without_hopper(state)) return;
    Fixture& f = Fixture::get();
    constexpr int n = 132 * 2 * 256;  // two waves of blocks on an H100
    constexpr int spin = 2000;
    Buffer data = f.device->allocate(n * sizeof(float), *f.stream);
    Buffer out = f.device->allocate(n * sizeof(float), *f.stream);
    const LaunchConfig first{.grid = n / 256, .block = 256};
    LaunchConfig second = first;
    second.programmatic_stream_serialization = programmatic;
    const Event start = f.device->create_event({.timing_enabled = true});
    const Event end = f.device->create_event({.timing_enabled = true});
    for (auto _ : state) {
        f.stream->record(start);
        launch(*f.stream, first, *f.produce, data, n, spin);
        launch(*f.stream, second, *f.consume, data, out, n, spin);
        f.stream->record(end);
        end.sync();
        state.SetIterationTime((end - start).count() / 1000.0);
    }
}

}  // namespace

BENCHMARK(raw_get_global)->Name("raw/get_global");
BENCHMARK(cudacore_get_global)->Name("cudacore/get_global");
BENCHMARK(raw_launch_attributes)->Name("raw/launch_attributes")->UseManualTime();
BENCHMARK(cudacore_launch_attributes)->Name("cudacore/launch_attributes")->UseManualTime();
BENCHMARK_CAPTURE(pdl_pair, serialized, false)->Name("pdl/serialized_pair")->UseManualTime();
BENCHMARK_CAPTURE(pdl_pair, programmatic, true)->Name("pdl/programmatic_pair")->UseManualTime();

CUDACORE_BENCH_MAIN();
