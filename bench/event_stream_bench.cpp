// Event create/destroy, event record and stream create/destroy: cudacore beside the raw driver.
#include "bench_support.hpp"

#include "cudacore/device.hpp"
#include "loader/driver_api.hpp"

namespace {

using namespace cudacore;

using bench::skip_without_gpu;

void raw_event_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device(0).set_current();
    for (auto _ : state) {
        CUevent event = nullptr;
        api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
        api.cuEventDestroy(event);
    }
}

void cudacore_event_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    for (auto _ : state) {
        Event event = device.create_event();
        benchmark::DoNotOptimize(event.handle());
    }
}

void raw_event_record(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    CUevent event = nullptr;
    api.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
    for (auto _ : state) api.cuEventRecord(event, stream.handle());
    stream.sync();
    api.cuEventDestroy(event);
}

void cudacore_event_record(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    Event event = device.create_event();
    for (auto _ : state) stream.record(event);
    stream.sync();
}

void raw_stream_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device(0).set_current();
    for (auto _ : state) {
        CUstream stream = nullptr;
        api.cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, 0);
        api.cuStreamDestroy(stream);
    }
}

void cudacore_stream_create_destroy(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    for (auto _ : state) {
        Stream stream = device.create_stream();
        benchmark::DoNotOptimize(stream.handle());
    }
}

// Interleaved raw/ours pairs, repeated, so drift affects both sides alike.
BENCHMARK(raw_event_create_destroy)->Name("raw/event_create_destroy")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_event_create_destroy)->Name("cudacore/event_create_destroy")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_event_record)->Name("raw/event_record")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_event_record)->Name("cudacore/event_record")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_stream_create_destroy)->Name("raw/stream_create_destroy")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_stream_create_destroy)->Name("cudacore/stream_create_destroy")->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

CUDACORE_BENCH_MAIN()
