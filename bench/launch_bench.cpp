// Launch cost, enqueue only: bursts of bench::launch_burst launches (below the launch queue
// depth) timed with the host clock, the stream drained outside the timed region. raw/... calls cuLaunchKernel with
// the same CUkernel and argument pointers; cudacore/... goes through launch() (argument and config
// checks included). Also the cost of a repeated get_kernel (cached; target under 100 ns).
#include "bench_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "loader/driver_api.hpp"

#include <chrono>
#include <optional>

namespace {

using namespace cudacore;

constexpr const char* kSource = R"(
struct Pair { int i; double d; };
extern "C" __global__ void empty() {}
extern "C" __global__ void eight(int a, double b, const int* in, char c, Pair p,
                                 unsigned long long u, float f, double* out) {
    if (threadIdx.x == 1024) { out[0] = a + b + in[0] + c + p.i + p.d + u + f; }
}
)";

struct Pair {
    int i;
    double d;
};

struct Fixture : bench::GpuFixture {
    std::optional<ObjectCode> code;
    std::optional<Kernel> empty;
    std::optional<Kernel> eight;
    CUdeviceptr scratch = 0;

    static Fixture& get() {
        static Fixture fixture;
        return fixture;
    }

private:
    Fixture() {
        if (!device) return;  // no GPU: nothing to make
        code.emplace(compile(kSource, "launch_bench"));
        empty.emplace(code->get_kernel("empty"));
        eight.emplace(code->get_kernel("eight"));
        detail::check(detail::driver().cuMemAlloc(&scratch, 64), "cuMemAlloc");
    }
};

using bench::skip_without_gpu;

void raw_empty(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    auto function = reinterpret_cast<CUfunction>(f.empty->handle());
    CUstream stream = f.stream->handle();
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr),
                          "cuLaunchKernel");
    });
}

void cudacore_empty(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const LaunchConfig config{.grid = 1, .block = 32};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i) launch(*f.stream, config, *f.empty);
    });
}

void raw_eight(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    auto function = reinterpret_cast<CUfunction>(f.eight->handle());
    CUstream stream = f.stream->handle();
    int a = 1;
    double b = 2;
    CUdeviceptr in = f.scratch;
    char c = 'c';
    Pair p{3, 4};
    unsigned long long u = 5;
    float fl = 6;
    CUdeviceptr out = f.scratch + 32;
    void* args[] = {&a, &b, &in, &c, &p, &u, &fl, &out};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            detail::check(api.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr),
                          "cuLaunchKernel");
    });
}

void cudacore_eight(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const LaunchConfig config{.grid = 1, .block = 32};
    const auto* in = reinterpret_cast<const int*>(f.scratch);
    auto* out = reinterpret_cast<double*>(f.scratch + 32);
    const Pair p{3, 4};
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            launch(*f.stream, config, *f.eight, 1, 2.0, in, 'c', p, 5ull, 6.0f, out);
    });
}

void cudacore_eight_typed(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    TypedKernel<void(int, double, const int*, char, Pair, unsigned long long, float, double*)>
        typed(*f.eight);
    const LaunchConfig config{.grid = 1, .block = 32};
    const auto* in = reinterpret_cast<const int*>(f.scratch);
    auto* out = reinterpret_cast<double*>(f.scratch + 32);
    bench::time_launch_bursts(state, *f.stream, [&] {
        for (int i = 0; i < bench::launch_burst; ++i)
            launch(*f.stream, config, typed, 1, 2.0, in, 'c', Pair{3, 4}, 5ull, 6.0f, out);
    });
}

// The driver's own lookup by name, beside cudacore's cached one.
void raw_get_kernel(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    const CUlibrary library = f.code->library_handle();
    for (auto _ : state) {
        CUkernel kernel = nullptr;
        detail::driver().cuLibraryGetKernel(&kernel, library, "eight");
        benchmark::DoNotOptimize(kernel);
    }
}

void cudacore_get_kernel(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Fixture& f = Fixture::get();
    for (auto _ : state) {
        Kernel kernel = f.code->get_kernel("eight");
        benchmark::DoNotOptimize(kernel);
    }
}

}  // namespace

BENCHMARK(raw_empty)->Name("raw/launch_empty")->UseManualTime();
BENCHMARK(cudacore_empty)->Name("cudacore/launch_empty")->UseManualTime();
BENCHMARK(raw_eight)->Name("raw/launch_8_arguments")->UseManualTime();
BENCHMARK(cudacore_eight)->Name("cudacore/launch_8_arguments")->UseManualTime();
BENCHMARK(cudacore_eight_typed)->Name("cudacore/launch_8_arguments_typed")->UseManualTime();
BENCHMARK(raw_get_kernel)->Name("raw/get_kernel");
BENCHMARK(cudacore_get_kernel)->Name("cudacore/get_kernel");
// Many threads asking at once (lock-free read path).
BENCHMARK(cudacore_get_kernel)->Name("cudacore/get_kernel_8_threads")->Threads(8);

CUDACORE_BENCH_MAIN();
