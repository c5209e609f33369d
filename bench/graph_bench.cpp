// Graph costs, raw driver beside cudacore in one run, for graphs of 1, 16 and 256 empty-kernel
// nodes:
//   raw/launch_N_kernels              N cuLaunchKernel calls (what a graph replaces)
//   raw/graph_replay_N                cuGraphLaunch of a graph the driver captured
//   cudacore/graph_replay_N           GraphExec::launch of a graph cudacore captured
//   raw/capture_instantiate_N         begin capture, N cuLaunchKernel, end, instantiate
//   cudacore/capture_instantiate_N    GraphBuilder::begin, N launch(), end(), instantiate()
// Enqueue cost only (host clock), the stream drained outside the timed region; counter
// ns_per_kernel divides by the kernels each iteration enqueues or records. Targets: replay of
// 256 nodes at most 0.25x of 256 raw launches per kernel; capture + instantiate within 1.1x raw.
#include "bench_support.hpp"

#include "cudacore/device.hpp"
#include "cudacore/graph.hpp"
#include "cudacore/graph_builder.hpp"
#include "cudacore/graph_exec.hpp"
#include "cudacore/launch.hpp"
#include "cudacore/object_code.hpp"
#include "loader/driver_api.hpp"

#include <chrono>
#include <map>
#include <optional>

namespace {

using namespace cudacore;
using Clock = std::chrono::steady_clock;

constexpr const char* kSource = R"(extern "C" __global__ void empty() {})";
constexpr unsigned kBlock = 32;

struct Fixture : bench::GpuFixture {
    std::optional<ObjectCode> code;
    std::optional<Kernel> empty;

    static Fixture& get() {
        static Fixture fixture;
        return fixture;
    }
    CUfunction function() const { return reinterpret_cast<CUfunction>(empty->handle()); }

private:
    Fixture() {
        if (!device) return;  // no GPU: nothing to make
        code.emplace(compile(kSource, "graph_bench"));
        empty.emplace(code->get_kernel("empty"));
    }
};

using bench::skip_without_gpu;

void raw_launches(const Fixture& f, int kernels) {
    const auto& api = detail::driver();
    for (int i = 0; i < kernels; ++i)
        detail::check(api.cuLaunchKernel(f.function(), 1, 1, 1, kBlock, 1, 1, 0, f.stream->handle(),
                                         nullptr, nullptr),
                      "cuLaunchKernel");
}

// A driver-built executable graph of `kernels` empty-kernel nodes (by capture, as a raw user).
CUgraphExec raw_graph(const Fixture& f, int kernels) {
    const auto& api = detail::driver();
    CUstream stream = f.stream->handle();
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    detail::check(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED),
                  "cuStreamBeginCapture");
    raw_launches(f, kernels);
    detail::check(api.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    detail::check(api.cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
    api.cuGraphDestroy(graph);
    return exec;
}

GraphExec cudacore_graph(const Fixture& f, int kernels) {
    const LaunchConfig config{.grid = 1, .block = kBlock};
    GraphBuilder builder(*f.stream);
    builder.begin();
    for (int i = 0; i < kernels; ++i) launch(builder, config, *f.empty);
    return builder.end().instantiate();
}

// Graph launches per timed iteration: 64 kernels' worth for small graphs, one for big ones.
int replays_for(int kernels) { return kernels >= 64 ? 1 : 64 / kernels; }

template <class Work>
void run_timed(benchmark::State& state, int kernels_per_iteration, Work&& work) {
    Fixture& f = Fixture::get();
    for (auto _ : state) {
        const auto start = Clock::now();
        work();
        const auto end = Clock::now();
        state.SetIterationTime(std::chrono::duration<double>(end - start).count());
        f.stream->sync();
    }
    state.counters["ns_per_kernel"] =
        benchmark::Counter(double(state.iterations()) * kernels_per_iteration,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void raw_launch_kernels(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const int kernels = static_cast<int>(state.range(0));
    const Fixture& f = Fixture::get();
    run_timed(state, kernels, [&] { raw_launches(f, kernels); });
}

void raw_graph_replay(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const int kernels = static_cast<int>(state.range(0));
    const Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    CUgraphExec exec = raw_graph(f, kernels);
    const int replays = replays_for(kernels);
    run_timed(state, kernels * replays, [&] {
        for (int i = 0; i < replays; ++i)
            detail::check(api.cuGraphLaunch(exec, f.stream->handle()), "cuGraphLaunch");
    });
    f.stream->sync();
    api.cuGraphExecDestroy(exec);
}

void cudacore_graph_replay(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const int kernels = static_cast<int>(state.range(0));
    const Fixture& f = Fixture::get();
    const GraphExec exec = cudacore_graph(f, kernels);
    const int replays = replays_for(kernels);
    run_timed(state, kernels * replays, [&] {
        for (int i = 0; i < replays; ++i) exec.launch(*f.stream);
    });
}

// Capture + instantiate; what was made is destroyed outside the timing.
void raw_capture_instantiate(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const int kernels = static_cast<int>(state.range(0));
    const Fixture& f = Fixture::get();
    const auto& api = detail::driver();
    for (auto _ : state) {
        CUgraph graph = nullptr;
        CUgraphExec exec = nullptr;
        const auto start = Clock::now();
        detail::check(api.cuStreamBeginCapture(f.stream->handle(), CU_STREAM_CAPTURE_MODE_RELAXED),
                      "cuStreamBeginCapture");
        raw_launches(f, kernels);
        detail::check(api.cuStreamEndCapture(f.stream->handle(), &graph), "cuStreamEndCapture");
        detail::check(api.cuGraphInstantiateWithFlags(&exec, graph, 0),
                      "cuGraphInstantiateWithFlags");
        const auto end = Clock::now();
        state.SetIterationTime(std::chrono::duration<double>(end - start).count());
        api.cuGraphExecDestroy(exec);
        api.cuGraphDestroy(graph);
    }
    state.counters["ns_per_kernel"] =
        benchmark::Counter(double(state.iterations()) * kernels,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void cudacore_capture_instantiate(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const int kernels = static_cast<int>(state.range(0));
    const Fixture& f = Fixture::get();
    const LaunchConfig config{.grid = 1, .block = kBlock};
    for (auto _ : state) {
        const auto start = Clock::now();
        std::optional<GraphExec> exec;
        {
            GraphBuilder builder(*f.stream);
            builder.begin();
            for (int i = 0; i < kernels; ++i) launch(builder, config, *f.empty);
            Graph graph = builder.end();
            exec.emplace(graph.instantiate());
            const auto end = Clock::now();
            state.SetIterationTime(std::chrono::duration<double>(end - start).count());
        }  // builder and graph go here, exec below: outside the timing
        exec.reset();
    }
    state.counters["ns_per_kernel"] =
        benchmark::Counter(double(state.iterations()) * kernels,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(raw_launch_kernels)->Name("raw/launch_kernels")->Arg(1)->Arg(16)->Arg(256)->UseManualTime();
BENCHMARK(raw_graph_replay)->Name("raw/graph_replay")->Arg(1)->Arg(16)->Arg(256)->UseManualTime();
BENCHMARK(cudacore_graph_replay)->Name("cudacore/graph_replay")->Arg(1)->Arg(16)->Arg(256)->UseManualTime();
BENCHMARK(raw_capture_instantiate)->Name("raw/capture_instantiate")->Arg(1)->Arg(16)->Arg(256)->UseManualTime();
BENCHMARK(cudacore_capture_instantiate)->Name("cudacore/capture_instantiate")->Arg(1)->Arg(16)->Arg(256)->UseManualTime();

CUDACORE_BENCH_MAIN();
