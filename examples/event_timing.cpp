// Events and timing: events recorded around kernels measure GPU time (Event - Event), a
// ScopedTimer does the same in one object, and an event orders work across two streams.
// Mirrors the event timing of cuda.core's examples (cuda_graphs.py, memory_performance_demo.py).
#include <cudacore/cudacore.hpp>

#include <cstdio>
#include <vector>

static const char* kSource = R"(
extern "C" __global__ void spin(float* x, int rounds, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int r = 0; r < rounds; ++r) v = v * 0.5f + 1.0f;   // converges to 2
    x[i] = v;
}
extern "C" __global__ void add_one(float* x, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
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
    Kernel spin = code.get_kernel("spin");
    Kernel add_one = code.get_kernel("add_one");
    const std::size_t n = 1 << 20;
    const LaunchConfig config{.grid = unsigned((n + 255) / 256), .block = 256};
    Buffer x = device.allocate(n * sizeof(float), stream);
    x.fill_byte(0, stream);

    // More rounds take longer: time each with a pair of events.
    std::vector<double> times;
    for (int rounds : {100, 1000, 10000}) {
        Event start = device.create_event({.timing_enabled = true});
        Event end = device.create_event({.timing_enabled = true});
        stream.record(start);
        launch(stream, config, spin, x, rounds, n);
        stream.record(end);
        end.sync();
        times.push_back((end - start).count());
        std::printf("%5d rounds: %.3f ms\n", rounds, times.back());
    }
    // The same measurement in one object.
    double scoped = 0;
    {
        ScopedTimer timer(stream);
        launch(stream, config, spin, x, 10000, n);
        scoped = timer.elapsed().count();
    }
    std::printf("ScopedTimer, 10000 rounds: %.3f ms\n", scoped);

    // An event orders a second stream after the first: add_one runs after spin has finished.
    Stream other = device.create_stream({.non_blocking = true});
    launch(stream, config, spin, x, 10, n);
    other.wait(stream.record());
    launch(other, config, add_one, x, n);
    std::vector<float> result(n);
    x.copy_to(result, other);
    other.sync();

    std::size_t wrong = 0;
    for (float v : result)
        if (v < 2.99f || v > 3.01f) ++wrong;   // spin leaves 2 (to float precision), add_one 3
    const bool timed = times[0] > 0 && times[2] > times[0] && scoped > 0;
    std::printf("timings %s, %zu wrong values\n", timed ? "consistent" : "INCONSISTENT", wrong);
    return wrong == 0 && timed ? 0 : 1;
} catch (const cudacore::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
