// CUDA graphs: capture three dependent kernels and a copy once, replay them as one graph many
// times, compare the time against launching them one by one, and check the result.
// Mirrors cuda.core's examples/cuda_graphs.py.
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <memory>

static const char* kSource = R"(
extern "C" __global__ void add_one(float* x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void twice(float* x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}
extern "C" __global__ void minus_two(float* x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] -= 2.0f;
}
)";

int main() try {
    using namespace cudacore;
    if (!system::driver_available() || system::device_count() == 0) {
        std::printf("skipped: no CUDA driver or GPU on this machine\n");
        return 0;
    }
    Device device(0);
    Stream stream = device.create_stream();
    ObjectCode code =
        Program(kSource, SourceType::cxx, {.arch = device.arch()}).compile(CodeType::cubin);
    Kernel add_one = code.get_kernel("add_one");
    Kernel twice = code.get_kernel("twice");
    Kernel minus_two = code.get_kernel("minus_two");

    const std::size_t n = 1 << 16;
    const LaunchConfig config{.grid = unsigned((n + 255) / 256), .block = 256};
    Buffer x = device.allocate(n * sizeof(float), stream);
    auto pinned = std::make_shared<LegacyPinnedMemoryResource>(device);
    Buffer result = pinned->allocate(n * sizeof(float), stream);

    // Capture: every launch and copy enqueued on the builder is recorded, nothing runs yet.
    // One step maps v to 2 (v + 1) - 2 = 2v: from 1, 10 steps give 1024.
    GraphBuilder builder = stream.begin_capture();
    launch(builder, config, add_one, x, n);
    launch(builder, config, twice, x, n);
    launch(builder, config, minus_two, x, n);
    Graph graph = builder.end();
    GraphExec exec = graph.instantiate({.upload_stream = stream});

    const int steps = 10;
    x.fill_uint32(0x3f800000, stream);   // 1.0f
    Milliseconds graph_time{};
    {
        ScopedTimer timer(stream);
        for (int s = 0; s < steps; ++s) exec.launch(stream);
        graph_time = timer.elapsed();
    }
    x.copy_to(result, stream);
    stream.sync();
    std::size_t wrong = 0;
    for (float v : result.span<float>())
        if (v != 1024.0f) ++wrong;

    // The same work launched kernel by kernel.
    x.fill_uint32(0x3f800000, stream);
    Milliseconds launch_time{};
    {
        ScopedTimer timer(stream);
        for (int s = 0; s < steps; ++s) {
            launch(stream, config, add_one, x, n);
            launch(stream, config, twice, x, n);
            launch(stream, config, minus_two, x, n);
        }
        launch_time = timer.elapsed();
    }
    x.copy_to(result, stream);
    stream.sync();
    for (float v : result.span<float>())
        if (v != 1024.0f) ++wrong;

    std::printf("%d replays of a 3-kernel graph: %.3f ms; the same 30 launches: %.3f ms; "
                "%zu wrong values\n",
                steps, graph_time.count(), launch_time.count(), wrong);
    return wrong == 0 ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
