// Allocate + free of 1 MiB through DeviceMemoryResource beside raw cuMemAllocAsync /
// cuMemFreeAsync, and host-to-device copy bandwidth from pinned memory beside the raw copy.
// Both sides use the device's default pool and the same stream kind; pairs run interleaved.
#include "bench_support.hpp"

#include "cudacore/buffer.hpp"
#include "cudacore/device.hpp"
#include "cudacore/device_memory_resource.hpp"
#include "cudacore/legacy_pinned_memory_resource.hpp"
#include "loader/driver_api.hpp"

namespace {

using namespace cudacore;

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t copy_size = 256 * MiB;

using bench::skip_without_gpu;

void raw_alloc_free(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    for (auto _ : state) {
        CUdeviceptr pointer = 0;
        api.cuMemAllocAsync(&pointer, MiB, stream.handle());
        benchmark::DoNotOptimize(pointer);
        api.cuMemFreeAsync(pointer, stream.handle());
    }
    stream.sync();
}

void cudacore_resource_alloc_free(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    auto resource = std::make_shared<DeviceMemoryResource>(device);
    Stream stream = device.create_stream();
    for (auto _ : state) {
        Buffer buffer = resource->allocate(MiB, stream);
        benchmark::DoNotOptimize(buffer.handle());
    }  // freed on its stream by the destructor
    stream.sync();
}

void cudacore_device_alloc_free(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    for (auto _ : state) {
        Buffer buffer = device.allocate(MiB, stream);
        benchmark::DoNotOptimize(buffer.handle());
    }
    stream.sync();
}

void raw_h2d_pinned(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    const auto& api = detail::driver();
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    void* host = nullptr;
    CUdeviceptr target = 0;
    api.cuMemHostAlloc(&host, copy_size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    api.cuMemAlloc(&target, copy_size);
    for (auto _ : state) {
        api.cuMemcpyHtoDAsync(target, host, copy_size, stream.handle());
        api.cuStreamSynchronize(stream.handle());
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * copy_size));
    api.cuMemFree(target);
    api.cuMemFreeHost(host);
}

void cudacore_h2d_pinned(benchmark::State& state) {
    if (skip_without_gpu(state)) return;
    Device device(0);
    device.set_current();
    Stream stream = device.create_stream();
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer host = pinned->allocate(copy_size, stream);
    Buffer target = device.allocate(copy_size, stream);
    for (auto _ : state) {
        target.copy_from(host, stream);
        stream.sync();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * copy_size));
}

BENCHMARK(raw_alloc_free)->Name("raw/alloc_free_1MiB")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_resource_alloc_free)->Name("cudacore/alloc_free_1MiB")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_alloc_free)->Name("raw/device_allocate_free_1MiB")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_device_alloc_free)->Name("cudacore/device_allocate_free_1MiB")->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(raw_h2d_pinned)->Name("raw/h2d_pinned_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(cudacore_h2d_pinned)->Name("cudacore/h2d_pinned_256MiB")->UseRealTime()->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

CUDACORE_BENCH_MAIN()
