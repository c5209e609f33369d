// What cudacore adds around a driver call, piece by piece: explains the ratios the other
// benchmarks print (each line here is one component, not a raw/cudacore pair).
#include "bench_support.hpp"

#include "cudacore/device.hpp"
#include "loader/driver_api.hpp"
#include "runtime/runtime_handles.hpp"
#include "support/box_access.hpp"

namespace {

using namespace cudacore;

using bench::skip_without_gpu;

void ctx_get_current(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device(0).set_current();
    CUcontext context = nullptr;
    for (auto _ : state) benchmark::DoNotOptimize(detail::driver().cuCtxGetCurrent(&context));
}

void ctx_get_id(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    CUcontext context = Device(0).set_current().handle();
    unsigned long long id = 0;
    for (auto _ : state) benchmark::DoNotOptimize(detail::driver().cuCtxGetId(context, &id));
}

void primary_context_lookup(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Context keep = Device(0).set_current();
    for (auto _ : state) benchmark::DoNotOptimize(detail::primary_context(0));
}

void context_scope_when_current(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Context context = Device(0).set_current();
    for (auto _ : state) {
        detail::ContextScope scope(*detail::box_of(context));
        benchmark::ClobberMemory();
    }
}

void event_box_allocation(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(std::make_shared<detail::EventBox>());
}

BENCHMARK(ctx_get_current)->Name("component/cuCtxGetCurrent");
BENCHMARK(ctx_get_id)->Name("component/cuCtxGetId");
BENCHMARK(primary_context_lookup)->Name("component/primary_context_lookup");
BENCHMARK(context_scope_when_current)->Name("component/context_scope_when_current");
BENCHMARK(event_box_allocation)->Name("component/event_box_make_shared");

}  // namespace

CUDACORE_BENCH_MAIN()
